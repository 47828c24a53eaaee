import { AdapterService } from '../src/application/adapter-service.js'
import { App } from '../src/application/app.js'
import { authenticate } from '../src/application/authentication/hooks/authenticate.js'
import { validateSchemas } from '../src/application/schema/validate-schemas.js'
import type { ServiceSchemas } from '../src/domain/schema/json-schema.js'
import type { SchemaType } from '../src/domain/schema/schema-type.js'
import type { Service } from '../src/domain/service/service.js'
import type { StoreFactory } from '../src/domain/store/store-factory.js'
import { InMemoryStoreFactory } from '../src/infrastructure/memory/in-memory-store-factory.js'
import { AjvSchemaValidator } from '../src/infrastructure/schema/ajv-schema-validator.js'

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

/**
 * Registration. In your app this is todos/todos.service.ts under src/services, called from
 * createReferenceApp (src/reference-app.ts) next to useMessages.
 */
export function useTodos(app: App, stores: StoreFactory, { requireLogin = true } = {}): void {
  // The store gets the records' schema too: it may use it to answer faster (the memory store ignores it).
  const store = stores.create<Todo>('todos', { schema: todoSchema })
  app.use('todos', new AdapterService(store, { paginate: { default: 10, max: 50 } }), { schemas: todoSchemas })
  app.service('todos').hooks({
    before: { all: [...(requireLogin ? [authenticate('jwt')] : []), validateSchemas()] }
  })
}

// `npm run example -- add-a-service`: the service on the memory store, without a transport or a login.
export async function main(): Promise<void> {
  const app = new App<{ todos: TodosService }>({ validator: new AjvSchemaValidator() })
  useTodos(app, new InMemoryStoreFactory(), { requireLogin: false })
  const todos = app.service('todos')
  // One object in, one record out: the service is not `multi`.
  const { id } = await todos.create({ title: '  Write the docs ' })
  console.log('created', await todos.get(id))
  console.log('patched', await todos.patch(id, { done: true }))
  console.log('updated', await todos.update(id, { title: 'Publish the docs' }))
  // What a REST or socket client may send, and typed calls cannot: the schemas refuse it.
  const asClientsSeeIt = app.service<Service>('todos')
  for (const data of [{ done: true }, { title: 'Tidy up', done: 'yes' }])
    await asClientsSeeIt.create(data).catch((error: Error) => console.log('refused', `${error.name}: ${error.message}`))
  console.log('found', await todos.find())
}
