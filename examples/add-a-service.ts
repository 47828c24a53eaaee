import { AdapterService } from '../src/application/adapter-service.js'
import type { App } from '../src/application/app.js'
import { authenticate } from '../src/application/authentication/hooks/authenticate.js'
import type { HookContext } from '../src/application/hook-context.js'
import { BadRequest } from '../src/domain/errors/errors.js'
import type { StoreFactory } from '../src/domain/store/store-factory.js'

/** The entity: what one `todos` record holds (the store adds the id). */
export interface Todo {
  id?: number | string
  title: string
  done: boolean
}

/** Before create: refuse a todo without a title and keep only the fields a todo has. */
export function validateTodo(context: HookContext): void {
  const { title, done } = (context.data ?? {}) as Partial<Todo>
  if (typeof title !== 'string' || title.trim() === '') throw new BadRequest('A todo needs a title', { field: 'title' })
  context.data = { title: title.trim(), done: done === true }
}

/** Registration: call it from createReferenceApp (src/reference-app.ts) next to `messages`. */
export function useTodos(app: App, stores: StoreFactory, { requireLogin = true } = {}): void {
  app.use('todos', new AdapterService(stores.create('todos'), { paginate: { default: 10, max: 50 } }))
  app.service('todos').hooks({
    before: { all: requireLogin ? [authenticate('jwt')] : [], create: [validateTodo] }
  })
}
