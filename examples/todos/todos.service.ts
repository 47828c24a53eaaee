import { AdapterService } from '../../src/application/adapter-service.js'
import type { App } from '../../src/application/app.js'
import { authenticate } from '../../src/application/authentication/hooks/authenticate.js'
import { validateSchemas } from '../../src/application/schema/validate-schemas.js'
import type { ServiceSchemas } from '../../src/domain/schema/json-schema.js'
import type { SchemaType } from '../../src/domain/schema/schema-type.js'
import type { StoreFactory } from '../../src/domain/store/store-factory.js'

/** Each field once. Memory ids are integers, RethinkDB ids UUID strings; a title is trimmed, then checked. */
const id = { type: ['integer', 'string'] } as const
const title = { type: 'string', minLength: 1, maxLength: 200, transform: ['trim'] } as const
const done = { type: 'boolean' } as const

/** The entity: what one `todos` record holds. */
export const todoSchema = {
  $id: 'Todo',
  type: 'object',
  properties: { id, title, done },
  required: ['id', 'title', 'done'],
  additionalProperties: false
} as const

/** Its TypeScript type derives from the schema (SchemaType): the two cannot disagree. */
export type Todo = SchemaType<typeof todoSchema>

/**
 * Create and update send a whole todo (a title; done defaults to false), patch some of its fields.
 * The id is the server's (`false`: refused from clients); any other field is refused too. Queries
 * may name the three fields, and REST's strings become their types (`?done=true`).
 */
export const todoSchemas = {
  result: todoSchema,
  data: {
    $id: 'TodoData',
    type: 'object',
    properties: { id: false, title, done: { ...done, default: false } },
    required: ['title'],
    additionalProperties: false
  },
  patch: {
    $id: 'TodoPatch',
    type: 'object',
    properties: { id: false, title, done },
    additionalProperties: false
  },
  query: { type: 'object', properties: { id, title, done }, additionalProperties: false }
} as const satisfies ServiceSchemas

/** The service's type: `new App<{ todos: TodosService }>()` types `app.service('todos')` with it. */
export type TodosService = AdapterService<Todo>

export interface TodosOptions {
  /** The composition root's store (memory, PostgreSQL or RethinkDB): a service never picks an adapter. */
  stores: StoreFactory
  /** Whether the app has an authentication service: with it, every method needs a login. */
  authentication: boolean
}

/**
 * Registration, and the service's line in the registry (src/services/index.ts): createReferenceApp calls it
 * with its `ServiceDeps`, of which it takes what it needs, and types `app.service('todos')` by what it returns.
 */
export function useTodos(app: App, { stores, authentication }: TodosOptions): TodosService {
  // The store gets the records' schema too: it may use it to answer faster (the memory store ignores it).
  const service = new AdapterService(stores.create<Todo>('todos', { schema: todoSchema }), {
    paginate: { default: 10, max: 50 }
  })
  app.use('todos', service, { schemas: todoSchemas })
  app.service('todos').hooks({
    before: { all: [...(authentication ? [authenticate('jwt')] : []), validateSchemas()] }
  })
  return service
}
