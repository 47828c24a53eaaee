import { afterEach, describe, expect, it, jest } from '@jest/globals'
import { AdapterService } from '../../../src/application/adapter-service.js'
import { App } from '../../../src/application/app.js'
import { LiveQueries, type LiveFrame } from '../../../src/application/live/index.js'
import { LiveView } from '../../../src/application/live/live-view.js'
import type { Connection } from '../../../src/domain/service/service.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'

/*
 * A write is handed only to the views its record's equality anchors file it under and to the views that hold the
 * record (ADR 0019): with many views of `{ room }`, a write in one room reaches one view, whatever their number.
 */
async function rooms(count: number) {
  const app = new App()
  app.use('messages', new AdapterService(new InMemoryStore()))
  const live = new LiveQueries(app, { maxWatches: count })
  app.extend(live)
  await app.setup()
  const messages = app.service('messages')
  const connection: Connection = { provider: 'test' }
  const frames = new Map<string, LiveFrame[]>()
  for (let room = 0; room < count; room++) {
    const mine: LiveFrame[] = []
    frames.set(`r${room}`, mine)
    await live.watch({
      connection,
      path: 'messages',
      query: { room: `r${room}`, $sort: { id: 1 }, $limit: 3 },
      options: {},
      find: (query) => messages.find({ query, paginate: false }),
      send: (frame) => void ('id' in frame && mine.push(frame)),
      answer: () => undefined
    })
  }
  return { live, frames }
}

afterEach(() => void jest.restoreAllMocks())

describe('matching a write to live views', () => {
  it('offers a write only to the views anchored at its values and to those holding the record', async () => {
    const { live, frames } = await rooms(200)
    const offer = jest.spyOn(LiveView.prototype, 'offer')
    live.observe({ path: 'messages', event: 'created', data: { id: 1, room: 'r7', text: 'a' } }, undefined)
    expect(offer).toHaveBeenCalledTimes(1)
    expect(frames.get('r7')).toHaveLength(1)

    offer.mockClear()
    live.observe({ path: 'messages', event: 'created', data: { id: 2, room: 'nobody', text: 'a' } }, undefined)
    expect(offer).not.toHaveBeenCalled()

    // Moved to another room: the view that held it (its old value is not in the event) and the one it enters.
    offer.mockClear()
    live.observe({ path: 'messages', event: 'patched', data: { id: 1, room: 'r9', text: 'a' } }, undefined)
    expect(offer).toHaveBeenCalledTimes(2)
    expect(frames.get('r7')!.at(-1)!.changes).toMatchObject([{ type: 'removed', oldIndex: 0 }])
    expect(frames.get('r9')!.at(-1)!.changes).toMatchObject([{ type: 'added', index: 0, record: { id: 1 } }])

    // The view it left no longer holds it: the next write of it reaches the one view it is in.
    offer.mockClear()
    live.observe({ path: 'messages', event: 'patched', data: { id: 1, room: 'r9', text: 'b' } }, undefined)
    expect(offer).toHaveBeenCalledTimes(1)
    expect(frames.get('r9')!.at(-1)!.changes).toMatchObject([{ type: 'changed', index: 0, oldIndex: 0 }])
    expect(frames.get('r7')).toHaveLength(2)
  })

  it('does not walk the connections on writes that cannot change a user', async () => {
    const { live } = await rooms(20)
    const held = (live as unknown as { held: Map<Connection, unknown> }).held
    const keys = jest.spyOn(held, 'keys')
    live.observe({ path: 'messages', event: 'patched', data: { id: 5, room: 'r1', text: 'a' } }, undefined)
    expect(keys).not.toHaveBeenCalled()
  })
})
