import { describe, expect, it } from '@jest/globals'
import { App } from '../../src/application/app.js'
import { BadRequest } from '../../src/domain/errors/errors.js'
import { InMemoryStoreFactory } from '../../src/infrastructure/memory/in-memory-store-factory.js'
import { useTodos } from '../../examples/add-a-service.js'

describe('the todos service', () => {
  const app = new App()
  useTodos(app, new InMemoryStoreFactory(), { requireLogin: false })
  const todos = app.service('todos')

  it('creates a todo with done defaulting to false', async () => {
    await expect(todos.create!({ title: '  Write docs ', extra: 'dropped' }, {})).resolves.toEqual({
      id: 0,
      title: 'Write docs',
      done: false
    })
  })

  it('refuses a todo without a title, or with a done that is not true or false', async () => {
    await expect(todos.create!({ done: true }, {})).rejects.toThrow(new BadRequest('A todo needs a title'))
    await expect(todos.create!({ title: 'Tidy up', done: 'yes' }, {})).rejects.toThrow(
      new BadRequest('done must be true or false')
    )
  })

  it('patches only the fields sent, checked like a new todo', async () => {
    await expect(todos.patch!(0, { done: true, extra: 'dropped' }, {})).resolves.toEqual({
      id: 0,
      title: 'Write docs',
      done: true
    })
    await expect(todos.patch!(0, { title: '   ' }, {})).rejects.toThrow(new BadRequest('A todo needs a title'))
    await expect(todos.patch!(0, { done: 1 }, {})).rejects.toThrow(new BadRequest('done must be true or false'))
    await expect(todos.get!(0, {})).resolves.toEqual({ id: 0, title: 'Write docs', done: true })
  })

  it('updates a whole todo: a title is required and done starts over at false', async () => {
    await expect(todos.update!(0, { title: 'Publish docs' }, {})).resolves.toEqual({
      id: 0,
      title: 'Publish docs',
      done: false
    })
    await expect(todos.update!(0, { done: true }, {})).rejects.toThrow(new BadRequest('A todo needs a title'))
  })
})
