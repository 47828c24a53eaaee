import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { io } from 'socket.io-client'
import { createClient, socketio, authentication } from '../../../src/library/client.js'
import { startReferenceServer } from '../../support/reference-server.js'
import { until } from './live-client.js'

const page = async (url: string, email: string) => {
  const socket = io(url, { transports: ['websocket'] })
  const client = createClient().configure(socketio(socket)).configure(authentication())
  await client.reAuthenticate().catch(() => undefined)
  await client.service('users').create({ email, password: 'secret-pass' })
  await client.authenticate({ strategy: 'local', email, password: 'secret-pass' })
  const watch = client.service('messages').watch({ query: { $sort: { createdAt: -1 }, $limit: 20 } })
  await watch.ready
  return { socket, client, watch }
}

/*
 * A view kept after its last watch (LIVE_KEEP_VIEWS) whose user then logs out: the chat page's first user watches,
 * unwatches and logs out. Writes of the messages service are resolved per rule set (the author as `user`) before
 * they reach views; the kept view's resolution as a logged-out connection failed, and that failure held back the
 * write from every view. Now the kept view resolves as its watcher was when it left, and a rule set whose
 * resolution fails leaves only its own views out (they read again).
 */
describe("live queries after a kept view's user logged out", () => {
  let server: Awaited<ReturnType<typeof startReferenceServer>>
  beforeAll(async () => void (server = await startReferenceServer()))
  afterAll(async () => server.close())

  it("still deliver every write to the other users' watches", async () => {
    const first = await page(server.url, 'first@example.com')
    await first.client.service('messages').create({ text: 'the first message' })
    expect(await until(() => first.watch.list.length === 1, 2000)).toBe(true)
    await first.watch.unwatch()
    await first.client.logout()
    const ann = await page(server.url, 'ann@example.com')
    const bob = await page(server.url, 'bob@example.com')
    await ann.client.service('messages').create({ text: 'Hello from Ann' })
    const seen = (p: typeof ann) => p.watch.list.some((m) => (m as { text?: unknown }).text === 'Hello from Ann')
    expect(await until(() => seen(bob) && seen(ann), 3000)).toBe(true)
    for (const p of [first, ann, bob]) p.socket.disconnect()
  }, 30_000)
})
