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
    await expect(todos.create({ title: '  Write docs ', extra: 'dropped' }, {})).resolves.toEqual({ id: 0, title: 'Write docs', done: false })
  })

  it('refuses a todo without a title', async () => {
    await expect(todos.create({ done: true }, {})).rejects.toThrow(new BadRequest('A todo needs a title'))
  })
})
