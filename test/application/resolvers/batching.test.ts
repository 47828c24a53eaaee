import { describe, expect, it } from '@jest/globals'
import { createHash } from 'node:crypto'
import { AdapterService } from '../../../src/application/adapter-service.js'
import { App } from '../../../src/application/app.js'
import { loaderFor, resolve, resolveResult, virtual } from '../../../src/application/resolvers/index.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'
import { InMemoryStoreFactory } from '../../../src/infrastructure/memory/in-memory-store-factory.js'
import { InMemoryUniqueKeys } from '../../../src/infrastructure/memory/in-memory-unique-keys.js'
import { AjvSchemaValidator } from '../../../src/infrastructure/schema/ajv-schema-validator.js'
import { createReferenceApp } from '../../../src/reference-app.js'
import { countingStores, expectOneUsersReadPerFind, seedChat } from '../../support/resolver-batching.js'

describe('the per-call loader', () => {
  function library() {
    const app = new App()
    const finds: unknown[] = []
    const authors = new AdapterService(new InMemoryStore(), { multi: true })
    const original = authors.find.bind(authors)
    authors.find = ((params) => {
      finds.push(params)
      return original(params)
    }) as typeof authors.find
    app.use('authors', authors)
    app.use('books', new AdapterService(new InMemoryStore(), { multi: true }))
    const byAuthor = resolve<{ authorId?: number; author?: Record<string, unknown> }>({
      author: virtual(async (book, context) =>
        book.authorId === undefined ? undefined : loaderFor(context, 'authors').load(book.authorId)
      )
    })
    app.service('books').hooks({ around: { all: [resolveResult(byAuthor)] } })
    return { app, finds }
  }

  it('coalesces the gets of one call into one find by $in, each id once, and answers each in its place', async () => {
    const { app, finds } = library()
    await app.service('authors').create([{ name: 'Ann' }, { name: 'Bob' }])
    await app.service('books').create([{ authorId: 1 }, { authorId: 0 }, { authorId: 1 }, { authorId: 7 }, {}])
    finds.length = 0
    const books = (await app.service('books').find({ provider: 'rest', user: { id: 3 }, authenticated: true })) as {
      author?: { name: string }
    }[]
    expect(books.map((book) => book.author?.name)).toEqual(['Bob', 'Ann', 'Bob', undefined, undefined])
    // A missing author leaves the property out instead of failing the page.
    expect(books[3]).not.toHaveProperty('author')
    expect(finds).toEqual([
      // The caller's identity (so the target's hooks apply as to the caller), nothing else of its params.
      { provider: 'rest', user: { id: 3 }, authenticated: true, query: { id: { $in: [1, 0, 7] } }, paginate: false }
    ])
  })

  it('is one loader per call: a second call reads again', async () => {
    const { app, finds } = library()
    await app.service('authors').create({ name: 'Ann' })
    await app.service('books').create({ authorId: 0 })
    finds.length = 0
    await app.service('books').get(0)
    await app.service('authors').patch(0, { name: 'Ann B.' })
    expect(await app.service('books').get(0)).toMatchObject({ author: { name: 'Ann B.' } })
    expect(finds).toHaveLength(2)
  })

  it('is shared by the calls of one caller (transport, user and token) that resolve in the same tick', async () => {
    const { app, finds } = library()
    await app.service('authors').create([{ name: 'Ann' }, { name: 'Bob' }])
    await app.service('books').create([{ authorId: 0 }, { authorId: 1 }, { authorId: 1 }])
    finds.length = 0
    const caller = () => ({
      provider: 'rest',
      user: { id: 3 },
      authentication: { strategy: 'jwt', accessToken: 'token-of-3' }
    })
    const books = (await Promise.all([0, 1, 2].map((id) => app.service('books').get(id, caller())))) as {
      author?: { name: string }
    }[]
    expect(books.map((book) => book.author?.name)).toEqual(['Ann', 'Bob', 'Bob'])
    expect(finds).toEqual([
      {
        provider: 'rest',
        user: { id: 3 },
        authentication: { strategy: 'jwt', accessToken: 'token-of-3' },
        authenticated: true,
        query: { id: { $in: [0, 1] } },
        paginate: false
      }
    ])
    // The next tick's calls read again.
    await app.service('authors').patch(1, { name: 'Bob B.' })
    expect(await app.service('books').get(1, caller())).toMatchObject({ author: { name: 'Bob B.' } })
    expect(finds).toHaveLength(2)
  })

  it('is never shared between callers that differ in user, token or transport, nor without a token', async () => {
    const { app, finds } = library()
    await app.service('authors').create({ name: 'Ann' })
    await app.service('books').create({ authorId: 0 })
    finds.length = 0
    const jwt = (accessToken: string) => ({ strategy: 'jwt', accessToken })
    const callers = [
      { provider: 'rest', user: { id: 3 }, authentication: jwt('a') },
      { provider: 'rest', user: { id: 4 }, authentication: jwt('a') },
      { provider: 'rest', user: { id: 3 }, authentication: jwt('b') },
      { provider: 'socketio', user: { id: 3 }, authentication: jwt('a') },
      { provider: 'rest', user: { id: 3 } },
      { provider: 'rest', user: { id: 3 } }
    ]
    await Promise.all(callers.map((params) => app.service('books').get(0, params)))
    expect(finds).toHaveLength(callers.length)
    expect(finds.map((params) => (params as { user?: { id: number } }).user?.id)).toEqual([3, 4, 3, 3, 3, 3])
  })
})

describe('the reference chat on the memory store', () => {
  function chat() {
    const { stores, reads } = countingStores(new InMemoryStoreFactory())
    const app = createReferenceApp({
      stores,
      validator: new AjvSchemaValidator(),
      uniqueKeys: new InMemoryUniqueKeys()
    })
    return { app, reads }
  }

  it('populates the authors of 25 messages with one read of the users store, never with their password', async () => {
    const { app, reads } = chat()
    await seedChat(app)
    await expectOneUsersReadPerFind(app, reads)
  })

  it("stores a new user's Gravatar as feathers-chat does, or the avatar given", async () => {
    const { app } = chat()
    const md5 = createHash('md5').update('ann@example.com').digest('hex')
    expect(await app.service('users').create({ email: ' Ann@Example.COM ', password: 'password-1' })).toMatchObject({
      email: 'Ann@Example.COM',
      avatar: `https://s.gravatar.com/avatar/${md5}?s=60`
    })
    const own = 'https://example.com/bob.png'
    expect(
      await app.service('users').create({ email: 'bob@example.com', password: 'password-2', avatar: own })
    ).toMatchObject({ avatar: own })
    await expect(
      app
        .service('users')
        .create(
          { email: 'eve@example.com', password: 'password-3', avatar: 'javascript:alert(1)' },
          { provider: 'rest' }
        )
    ).rejects.toMatchObject({ code: 400 })
  })

  it('sends created events with the author, without the password', async () => {
    const { app } = chat()
    const events: unknown[] = []
    app.service('messages').on('created', (message) => events.push(message))
    const ann = await app.service('users').create({ email: 'ann@example.com', password: 'password-1' })
    await app.service('messages').create({ text: 'hi', userId: ann.id } as never)
    expect(events).toEqual([
      expect.objectContaining({ text: 'hi', user: expect.objectContaining({ email: 'ann@example.com' }) })
    ])
    expect((events[0] as { user: object }).user).not.toHaveProperty('password')
  })
})
