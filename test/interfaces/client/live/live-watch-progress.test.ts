import { describe, expect, it } from '@jest/globals'
import { createClient } from '../../../../src/interfaces/client/client-app.js'
import { LiveWatch, type LiveTransport } from '../../../../src/interfaces/client/live-watch.js'

type Row = { id: number }

/**
 * Progress frames (docs/wire-protocol.md, Live queries): `["live", { offset }]` without an id says every watch of the
 * connection is current at `offset`. A live watch takes it as its offset (a resume starts there) and changes
 * nothing else; a watch still waiting for its answer ignores it. `["live", { id, offset, changes: [] }]` is the same
 * for one watch (sent while another watch of the connection is mid-read).
 */
function transportOf() {
  let listener: ((frame: unknown) => void) | undefined
  const answers: ((answer: unknown) => void)[] = []
  const sent: unknown[] = []
  const transport: LiveTransport = {
    request: (event, ...args) => {
      if (event !== 'watch') return Promise.resolve({ id: '-' })
      sent.push(args[2])
      return new Promise((resolve) => answers.push(resolve))
    },
    listen: (_event, handler) => ((listener = handler), () => (listener = undefined))
  }
  return { transport, sent, answer: (value: unknown) => answers.shift()!(value), frame: (f: unknown) => listener!(f) }
}

describe("plumage's client: progress frames", () => {
  it('move a live watch’s offset, and its resume starts there; no change is emitted', async () => {
    const { transport, sent, answer, frame } = transportOf()
    const app = createClient()
    const watch = new LiveWatch<Row>(app, transport, 'messages', {})
    const changes: unknown[] = []
    watch.on('change', (change) => changes.push(change))
    // Before the answer: ignored (the answer's offset comes after it).
    frame({ offset: 'early' })
    answer({ id: '1', offset: 'a', records: [{ id: 1 }] })
    await watch.ready
    expect(watch.offset).toBe('a')
    frame({ offset: 'b' })
    expect(watch.offset).toBe('b')
    expect(watch.list).toEqual([{ id: 1 }])
    expect(changes).toEqual([])
    // Malformed progress is ignored.
    frame({ offset: 7 })
    expect(watch.offset).toBe('b')
    // A watch's own progress (sent while another watch of the connection reads): its id, no change.
    frame({ id: '1', offset: 'c', changes: [] })
    frame({ id: 'other', offset: 'd', changes: [] })
    expect(watch.offset).toBe('c')
    expect(changes).toEqual([])
    app.emit('disconnect')
    app.emit('connect')
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(sent.at(-1)).toEqual({ resume: { offset: 'c', records: [{ id: 1 }] } })
    answer({ id: '2', offset: 'c', changes: [] })
    await watch.unwatch()
  })
})
