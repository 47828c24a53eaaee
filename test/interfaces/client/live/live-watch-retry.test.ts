import { describe, expect, it } from '@jest/globals'
import { Timeout } from '../../../../src/domain/errors/errors.js'
import { createClient } from '../../../../src/interfaces/client/client-app.js'
import { LiveWatch, type LiveTransport } from '../../../../src/interfaces/client/live-watch.js'

type Row = { id: number }

/**
 * A transport whose `watch` requests are answered by `answers` in turn (a function that throws rejects the request,
 * as socket.io's timeout does); it records each request's options.
 */
function transportOf(answers: (() => unknown)[]) {
  const sent: unknown[] = []
  const transport: LiveTransport = {
    request: (event, ...args) => {
      if (event !== 'watch') return Promise.resolve({ id: '-' })
      sent.push(args[2])
      const answer = answers.shift()
      return answer ? Promise.resolve().then(answer) : new Promise(() => undefined)
    },
    listen: () => () => undefined
  }
  return { transport, sent }
}

const until = async (done: () => boolean, ms = 5000) => {
  for (const end = Date.now() + ms; !done() && Date.now() < end;) await new Promise((r) => setTimeout(r, 20))
  return done()
}

describe("plumage's client: a live watch whose resume fails while the socket stays up", () => {
  it('watches again, backing off, until a resume is answered (no reconnect needed)', async () => {
    const { transport, sent } = transportOf([
      () => ({ id: '1', offset: 'a', records: [{ id: 1 }] }),
      // The resume after a reconnect times out: the instance waited for its log longer than the client's timeout.
      () => {
        throw new Timeout('Timeout of 4000ms exceeded on watch')
      },
      () => {
        throw new Timeout('Timeout of 4000ms exceeded on watch')
      },
      () => ({ id: '2', offset: 'c', records: [{ id: 2 }, { id: 1 }], reset: true })
    ])
    const app = createClient()
    const watch = new LiveWatch<Row>(app, transport, 'messages', { $sort: { id: -1 } })
    const errors: unknown[] = []
    watch.on('error', (error) => errors.push(error))
    expect(await watch.ready).toEqual([{ id: 1 }])
    app.emit('disconnect')
    app.emit('connect')
    expect(await until(() => watch.list.length === 2)).toBe(true)
    expect(watch.list).toEqual([{ id: 2 }, { id: 1 }])
    expect(watch.offset).toBe('c')
    expect(errors).toHaveLength(2)
    // Every retry resumed from where the list stood.
    expect(sent.slice(1)).toEqual(Array(3).fill({ resume: { offset: 'a', records: [{ id: 1 }] } }))
    await watch.unwatch()
  })

  it('does not retry while disconnected: the next connect watches again', async () => {
    const { transport, sent } = transportOf([
      () => ({ id: '1', offset: 'a', records: [] }),
      () => {
        throw new Timeout('Timeout of 4000ms exceeded on watch')
      },
      () => ({ id: '2', offset: 'b', records: [] })
    ])
    const app = createClient()
    const watch = new LiveWatch<Row>(app, transport, 'messages', {})
    watch.on('error', () => undefined)
    await watch.ready
    app.emit('disconnect')
    app.emit('connect')
    await until(() => sent.length === 2)
    app.emit('disconnect')
    await new Promise((r) => setTimeout(r, 600))
    expect(sent).toHaveLength(2)
    app.emit('connect')
    expect(await until(() => sent.length === 3)).toBe(true)
    await watch.unwatch()
    await new Promise((r) => setTimeout(r, 600))
    expect(sent).toHaveLength(3)
  })
})
