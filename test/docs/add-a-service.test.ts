import { describe, expect, it } from '@jest/globals'
import { App } from '../../src/application/app.js'
import type { Service } from '../../src/domain/service/service.js'
import { InMemoryStoreFactory } from '../../src/infrastructure/memory/in-memory-store-factory.js'
import { AjvSchemaValidator } from '../../src/infrastructure/schema/ajv-schema-validator.js'
import { useTodos, type TodosService } from '../../examples/todos/todos.service.js'

describe('the todos service', () => {
  const app = new App<{ todos: TodosService }>({ validator: new AjvSchemaValidator() })
  useTodos(app, { stores: new InMemoryStoreFactory(), authentication: false })
  // Typed: `todos.create({ title: 1 })` does not compile. Untyped, as REST and socket clients reach it:
  const todos = app.service('todos')
  const asClientsSeeIt = app.service<Service>('todos')

  it('creates a todo: the title trimmed, done defaulting to false', async () => {
    await expect(todos.create({ title: '  Write docs ' })).resolves.toEqual({ id: 0, title: 'Write docs', done: false })
  })

  it('refuses a todo without a title, a done that is not a boolean, an id or any other field', async () => {
    await expect(asClientsSeeIt.create({ done: true })).rejects.toThrow("Invalid data: 'title' is required")
    await expect(asClientsSeeIt.create({ title: 'Tidy up', done: 'yes' })).rejects.toThrow("'done' must be boolean")
    await expect(asClientsSeeIt.create({ title: 'Tidy up', id: 7 }, { provider: 'rest' })).rejects.toThrow(
      "'id' is set by the server and may not be sent"
    )
    await expect(asClientsSeeIt.create({ title: 'Tidy up', priority: 1 })).rejects.toThrow(
      "'priority' is not an allowed field"
    )
  })

  it('patches only the fields sent, checked like a new todo', async () => {
    await expect(todos.patch(0, { done: true })).resolves.toEqual({ id: 0, title: 'Write docs', done: true })
    await expect(todos.patch(0, { title: '   ' })).rejects.toThrow("'title' must have at least 1 character")
    await expect(asClientsSeeIt.patch(0, { done: 1 })).rejects.toThrow("'done' must be boolean")
    await expect(todos.get(0)).resolves.toEqual({ id: 0, title: 'Write docs', done: true })
  })

  it('updates a whole todo: a title is required and done starts over at false', async () => {
    await expect(todos.update(0, { title: 'Publish docs' })).resolves.toEqual({
      id: 0,
      title: 'Publish docs',
      done: false
    })
    await expect(todos.update(0, { done: true })).rejects.toThrow("Invalid data: 'title' is required")
  })

  it('finds todos by their fields, REST strings converted to the declared types', async () => {
    await todos.create({ title: 'Review', done: true })
    const page = { total: 1, limit: 10, skip: 0, data: [{ id: 1, title: 'Review', done: true }] }
    await expect(todos.find({ query: { done: 'true' }, provider: 'rest' })).resolves.toEqual(page)
    await expect(todos.find({ query: { owner: 'ann' } })).rejects.toThrow("'owner' is not a field that can be queried")
  })
})
