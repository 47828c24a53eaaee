import { createServer, connect, type Server, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { builtInstances, signUp, type Instance, type Instances } from '../support/app-instances.js'
import { request } from '../support/reference-server.js'
import { discoverRethinkDb } from '../support/rethinkdb-server.js'

/*
 * A keyed write on RethinkDB whose instance is killed (SIGKILL) between the commit and the reply, with real
 * processes: instance A reaches the database through a proxy that, once armed, kills A the moment the server sends
 * A anything carrying the write's text (its reply, or a feed row of it) and drops it. The proxy keeps A's
 * connections to the server open, as a server that has not noticed yet does, so the server completes the query:
 * the write commits and its reply never reaches A. The client, never answered, sends the same request with the
 * same key to instance B: it gets the write's answer, and the write exists once. Without a server (RETHINKDB_URL,
 * RETHINKDB_BIN or Docker) discoverRethinkDb prints its loud SKIPPED line.
 */
const rethinkdb = await discoverRethinkDb()
const withServer = rethinkdb ? describe : describe.skip

/** A TCP proxy to `port` that, when armed with a marker, kills `victim` on the first server bytes carrying it. */
async function replyEater(port: number): Promise<{
  port: number
  arm(marker: string, victim: () => void): void
  fired: () => boolean
  close(): Promise<void>
}> {
  const sockets = new Set<Socket>()
  let armed: { marker: Buffer; victim: () => void } | undefined
  let fired = false
  const server: Server = createServer((client) => {
    const upstream = connect({ host: '127.0.0.1', port })
    sockets.add(client).add(upstream)
    // The server side stays open when A dies: nothing tells the server its client is gone.
    client.pipe(upstream, { end: false })
    client.on('error', () => undefined)
    upstream.on('error', () => client.destroy())
    upstream.on('data', (chunk: Buffer) => {
      if (fired) return
      if (armed && chunk.includes(armed.marker)) {
        fired = true
        armed.victim()
        return
      }
      if (!client.destroyed) client.write(chunk)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as { port: number }).port,
    arm: (marker, victim) => (armed = { marker: Buffer.from(marker), victim }),
    fired: () => fired,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    }
  }
}

withServer('a keyed write on RethinkDB, its instance killed between the commit and the reply', () => {
  let instances: Instances
  let proxy: Awaited<ReturnType<typeof replyEater>>
  const started: Instance[] = []
  beforeAll(async () => {
    instances = await builtInstances('rethinkdb-keyed-kill')
    proxy = await replyEater(rethinkdb!.port)
  }, 90_000)
  afterAll(async () => {
    for (const instance of started) await instance.stop()
    await proxy?.close()
    await instances?.cleanup()
    await rethinkdb?.stop()
  })

  it('answers the repeat on another instance with the committed write, written once', async () => {
    const db = `${rethinkdb!.db}_kill`
    const b = await instances.start({ RETHINKDB_URL: `rethinkdb://127.0.0.1:${rethinkdb!.port}/${db}` })
    const a = await instances.start({ RETHINKDB_URL: `rethinkdb://127.0.0.1:${proxy.port}/${db}` })
    started.push(b, a)
    const token = await signUp(b.url, 'killed@x.io')
    const text = `committed before the kill ${Math.random().toString(36).slice(2)}`
    const post = (url: string) =>
      request(url, 'POST', '/messages', { body: { text }, token, headers: { 'Idempotency-Key': '"kill-1"' } })
    proxy.arm(text, () => a.kill())
    await expect(post(a.url)).rejects.toThrow()
    expect(proxy.fired()).toBe(true)
    const messages = async () => {
      const found = await request(b.url, 'GET', `/messages?text=${encodeURIComponent(text)}`, { token })
      const list = found.body as { data?: unknown[] } | unknown[]
      return (Array.isArray(list) ? list : list.data) ?? []
    }
    // The write committed though A died unanswered: the repeat must answer it, not write it again.
    for (let tries = 0; tries < 50 && (await messages()).length === 0; tries++)
      await new Promise((resolve) => setTimeout(resolve, 100))
    const [committed] = await messages()
    expect(committed).toMatchObject({ text })
    const repeat = await post(b.url)
    expect(repeat.status).toBe(201)
    expect(repeat.body).toEqual(committed)
    expect((await post(b.url)).body).toEqual(committed)
    expect(await messages()).toHaveLength(1)
  }, 90_000)
})
