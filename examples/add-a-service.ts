import { AdapterService } from '../src/application/adapter-service.js'
import { App } from '../src/application/app.js'
import { authenticate } from '../src/application/authentication/hooks/authenticate.js'
import type { HookContext } from '../src/application/hook-context.js'
import { BadRequest } from '../src/domain/errors/errors.js'
import type { Data, Id } from '../src/domain/service/service.js'
import type { StoreFactory } from '../src/domain/store/store-factory.js'
import { InMemoryStoreFactory } from '../src/infrastructure/memory/in-memory-store-factory.js'

/** The entity: what one `todos` record holds (the store adds the id). */
export interface Todo {
  id?: number | string
  title: string
  done: boolean
}

/** The checks of each field, for whichever of them a call sends. */
function checked({ title, done }: Partial<Todo>): Partial<Todo> {
  if (title !== undefined && (typeof title !== 'string' || title.trim() === ''))
    throw new BadRequest('A todo needs a title', { field: 'title' })
  if (done !== undefined && typeof done !== 'boolean')
    throw new BadRequest('done must be true or false', { field: 'done' })
  return { ...(title !== undefined ? { title: title.trim() } : {}), ...(done !== undefined ? { done } : {}) }
}

/** Before create and update (a whole todo): a title is required, done defaults to false, other fields are dropped. */
export function validateTodo(context: HookContext): void {
  const data = (context.data ?? {}) as Partial<Todo>
  if (data.title === undefined) throw new BadRequest('A todo needs a title', { field: 'title' })
  const { title, done = false } = checked(data)
  context.data = { title, done }
}

/** Before patch (some fields): only what was sent changes, checked as above; other fields are dropped. */
export function validateTodoPatch(context: HookContext): void {
  context.data = checked((context.data ?? {}) as Partial<Todo>)
}

/**
 * Registration. In your app this is todos/todos.service.ts under src/services, called from
 * createReferenceApp (src/reference-app.ts) next to useMessages.
 */
export function useTodos(app: App, stores: StoreFactory, { requireLogin = true } = {}): void {
  app.use('todos', new AdapterService(stores.create('todos'), { paginate: { default: 10, max: 50 } }))
  app.service('todos').hooks({
    before: {
      all: requireLogin ? [authenticate('jwt')] : [],
      create: [validateTodo],
      update: [validateTodo],
      patch: [validateTodoPatch]
    }
  })
}

// `npm run example -- add-a-service`: the service on the memory store, without a transport or a login.
export async function main(): Promise<void> {
  const app = new App()
  useTodos(app, new InMemoryStoreFactory(), { requireLogin: false })
  const todos = app.service('todos')
  const { id } = (await todos.create({ title: '  Write the docs ', priority: 'dropped' }, {})) as Data
  console.log('created', await todos.get(id as Id, {}))
  console.log('patched', await todos.patch(id as Id, { done: true }, {}))
  console.log('updated', await todos.update(id as Id, { title: 'Publish the docs' }, {}))
  const refused = [
    () => todos.create({ done: true }, {}),
    () => todos.patch(id as Id, { title: ' ' }, {}),
    () => todos.update(id as Id, { title: 'x', done: 'yes' }, {})
  ]
  for (const call of refused)
    await call().catch((error: Error) => console.log('refused', `${error.name}: ${error.message}`))
  console.log('found', await todos.find({}))
}
