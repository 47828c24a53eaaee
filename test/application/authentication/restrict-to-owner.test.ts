import { describe, expect, it } from '@jest/globals'
import { AdapterService } from '../../../src/application/adapter-service.js'
import { App } from '../../../src/application/app.js'
import { restrictToOwner } from '../../../src/application/authentication/hooks/restrict-to-owner.js'
import type { Params } from '../../../src/domain/service/service.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'

async function messagesApp() {
  const app = new App()
  app.use('messages', new AdapterService(new InMemoryStore(), { multi: ['patch', 'remove'] }))
  const owner = restrictToOwner({ ownerField: 'userId' })
  app.service('messages').hooks({ before: { update: [owner], patch: [owner], remove: [owner] } })
  const messages = app.service('messages')
  for (const data of [
    { text: 'a1', userId: 1 },
    { text: 'a2', userId: 1 },
    { text: 'b1', userId: 2 },
    { text: 'orphan' }
  ]) {
    await messages.create(data)
  }
  return { app, messages }
}

const as = (id: number, query: Params['query'] = {}): Params => ({ provider: 'rest', user: { id }, query })

describe('restrictToOwner hook', () => {
  it('lets the owner patch, update and remove a record by id', async () => {
    const { messages } = await messagesApp()
    await expect(messages.patch(0, { text: 'a1!' }, as(1))).resolves.toEqual({ id: 0, text: 'a1!', userId: 1 })
    await expect(messages.update(0, { text: 'a1?', userId: 1 }, as(1))).resolves.toEqual({
      id: 0,
      text: 'a1?',
      userId: 1
    })
    await expect(messages.remove(0, as(1))).resolves.toMatchObject({ id: 0 })
  })

  it("answers 403 Forbidden for someone else's record and for a record without owner, and changes nothing", async () => {
    const { messages } = await messagesApp()
    for (const id of [2, 3]) {
      await expect(messages.patch(id, { text: 'x' }, as(1))).rejects.toMatchObject({
        name: 'Forbidden',
        code: 403,
        message: "You can only patch your own records in 'messages'"
      })
      await expect(messages.update(id, { text: 'x' }, as(1))).rejects.toMatchObject({ code: 403 })
      await expect(messages.remove(id, as(1))).rejects.toMatchObject({ code: 403 })
    }
    expect(await messages.find()).toHaveLength(4)
    expect(await messages.get(2)).toEqual({ id: 2, text: 'b1', userId: 2 })
  })

  it('keeps 404 for a record that does not exist', async () => {
    const { messages } = await messagesApp()
    await expect(messages.patch(99, { text: 'x' }, as(1))).rejects.toMatchObject({ name: 'NotFound', code: 404 })
  })

  it("narrows multi patch and remove to the caller's own records, ANDed with the query and any $and", async () => {
    const { messages } = await messagesApp()
    const patched = (await messages.patch(null, { seen: true }, as(2))) as unknown[]
    expect(patched).toEqual([{ id: 2, text: 'b1', userId: 2, seen: true }])
    const none = await messages.remove(null, as(2, { text: 'a1' }))
    expect(none).toEqual([])
    const some = (await messages.remove(null, as(1, { $and: [{ text: { $in: ['a2', 'b1'] } }] }))) as unknown[]
    expect(some).toEqual([{ id: 1, text: 'a2', userId: 1 }])
    expect(((await messages.find()) as { id: number }[]).map((record) => record.id)).toEqual([0, 2, 3])
  })

  it('cannot be bypassed with a query naming another owner', async () => {
    const { messages } = await messagesApp()
    expect(await messages.remove(null, as(1, { userId: 2 }))).toEqual([])
    expect(await messages.get(2)).toMatchObject({ userId: 2 })
  })

  it('trusts internal calls without a user and refuses external calls without one', async () => {
    const { messages } = await messagesApp()
    await expect(messages.patch(2, { text: 'by the server' })).resolves.toMatchObject({ text: 'by the server' })
    await expect(messages.remove(2, { provider: 'rest' })).rejects.toMatchObject({
      name: 'NotAuthenticated',
      code: 401
    })
  })

  it('compares ids by their string form, so a store with string ids and REST ids agree', async () => {
    const app = new App()
    app.use('users', new AdapterService(new InMemoryStore()))
    app.service('users').hooks({ before: { patch: [restrictToOwner({ ownerField: 'id' })] } })
    await app.service('users').create({ name: 'u0' })
    await app.service('users').create({ name: 'u1' })
    await expect(app.service('users').patch('1', { name: 'me' }, as(1))).resolves.toEqual({ id: 1, name: 'me' })
    await expect(app.service('users').patch('0', { name: 'them' }, as(1))).rejects.toMatchObject({ code: 403 })
  })
})
