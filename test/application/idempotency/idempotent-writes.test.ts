import { describe, expect, it } from '@jest/globals'
import { createHash } from 'node:crypto'
import { AdapterService } from '../../../src/application/adapter-service.js'
import { App } from '../../../src/application/app.js'
import { idempotencyHooks } from '../../../src/application/idempotency/index.js'
import type { Data, Params } from '../../../src/domain/service/service.js'
import { InMemoryKeyedWrites } from '../../../src/infrastructure/memory/in-memory-keyed-writes.js'
import { clone, InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'

/** An app with `notes` over a memory store that honours keys, `plain` over one that does not, and the hooks. */
function appWithKeys() {
  const app = new App()
  app.use('notes', new AdapterService(new InMemoryStore({ keyedWrites: new InMemoryKeyedWrites(clone) })))
  app.use('plain', new AdapterService(new InMemoryStore()))
  app.hooks(
    idempotencyHooks({
      retentionMs: 60_000,
      waitMs: 1000,
      digest: (text) => createHash('sha256').update(text).digest('hex')
    })
  )
  const events: string[] = []
  for (const path of ['notes', 'plain'])
    for (const event of ['created', 'removed']) app.service(path).on(event, () => events.push(`${path} ${event}`))
  return { app, events }
}
const keyed = (key: string, user?: Data): Params => ({ query: { $idempotencyKey: key }, ...(user ? { user } : {}) })

describe('the idempotency hooks', () => {
  it('writes a keyed create once, emits one event, and answers the repeat with the first answer', async () => {
    const { app, events } = appWithKeys()
    const first = await app.service('notes').create({ text: 'a' }, keyed('k1'))
    const again = await app.service('notes').create({ text: 'a' }, keyed('k1'))
    expect(again).toEqual(first)
    expect(await app.service('notes').find({})).toHaveLength(1)
    expect(events).toEqual(['notes created'])
  })

  it('scopes keys per user, read after the hooks before the store ran', async () => {
    const { app } = appWithKeys()
    // A before hook that puts the caller on the params, as authentication does (new params object).
    app.service('notes').hooks({
      before: {
        create: [
          (context) =>
            void (context.params = { ...context.params, user: { id: context.data && (context.data as Data).by } })
        ]
      }
    })
    await app.service('notes').create({ text: 'x', by: 1 }, keyed('same'))
    await app.service('notes').create({ text: 'x', by: 2 }, keyed('same'))
    await app.service('notes').create({ text: 'x', by: 1 }, keyed('same'))
    expect(await app.service('notes').find({})).toHaveLength(2)
  })

  it('answers a repeated remove with the kept answer although the record is gone', async () => {
    const { app, events } = appWithKeys()
    const note = (await app.service('notes').create({ text: 'bye' })) as Data
    const removed = await app.service('notes').remove(note.id as number, keyed('r'))
    expect(await app.service('notes').remove(note.id as number, keyed('r'))).toEqual(removed)
    await expect(app.service('notes').remove(note.id as number, keyed('other'))).rejects.toMatchObject({ code: 404 })
    expect(events.filter((event) => event === 'notes removed')).toHaveLength(1)
  })

  it('refuses another request under a used key (422) and a malformed key (400)', async () => {
    const { app } = appWithKeys()
    await app.service('notes').create({ text: 'a' }, keyed('k'))
    await expect(app.service('notes').create({ text: 'b' }, keyed('k'))).rejects.toMatchObject({ code: 422 })
    await expect(app.service('notes').create({ text: 'b' }, keyed('two words'))).rejects.toMatchObject({ code: 400 })
    await expect(app.service('notes').create({ text: 'b' }, keyed('k'.repeat(256)))).rejects.toMatchObject({
      code: 400
    })
  })

  it('leaves a service whose store does not honour keys as it was (the key is taken out of the query)', async () => {
    const { app, events } = appWithKeys()
    await app.service('plain').create({ text: 'a' }, keyed('k'))
    await app.service('plain').create({ text: 'a' }, keyed('k'))
    expect(await app.service('plain').find({})).toHaveLength(2)
    expect(events).toEqual(['plain created', 'plain created'])
  })
})
