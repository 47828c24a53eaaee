import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import type { Socket } from 'socket.io-client'
import { type AuthServer } from '../support/auth-server.js'
import { discoverPostgres } from '../support/postgres-server.js'
import { discoverRethinkDb } from '../support/rethinkdb-server.js'
import {
  call,
  connectSocket,
  request,
  signup,
  startReferenceServer,
  type Session
} from '../support/reference-server.js'

/*
 * Idempotency keys end to end, on the reference app as the composition root builds it, on memory and (when a server
 * is at hand) PostgreSQL and RethinkDB: the Idempotency-Key header over REST, `$idempotencyKey` over socket.io,
 * repeats sent in parallel, per-user scopes, refusals, and the events of a write and its repeats.
 */
const database = await discoverPostgres()
const stores: [string, Record<string, string>][] = [['memory', {}]]
if (database) stores.push(['postgres', { STORE: 'postgres', POSTGRES_URL: database.url }])
else process.stderr.write('SKIPPED: idempotency e2e on PostgreSQL (no server and no binaries)\n')
// Without a server discoverRethinkDb prints its own loud SKIPPED line.
const rethinkdb = await discoverRethinkDb()
if (rethinkdb)
  stores.push([
    'rethinkdb',
    { STORE: 'rethinkdb', RETHINKDB_URL: `rethinkdb://${rethinkdb.host}:${rethinkdb.port}/${rethinkdb.db}` }
  ])
afterAll(async () => {
  await database?.stop()
  await rethinkdb?.stop()
})

interface Message {
  id: number | string
  text: string
}

describe.each(stores)('idempotency keys on %s', (_store, env) => {
  let server: AuthServer
  let alice: Session
  let bob: Session
  const sockets: Socket[] = []
  const run = Math.random().toString(36).slice(2, 8)
  const post = (session: Session, key: string | undefined, body: unknown) =>
    request(server.url, 'POST', '/messages', {
      body,
      token: session.token,
      headers: key === undefined ? {} : { 'Idempotency-Key': key }
    })
  const messagesWith = async (text: string) => {
    const found = await request(server.url, 'GET', `/messages?text=${encodeURIComponent(text)}&$limit=100`, {
      token: alice.token
    })
    const body = found.body as { data: Message[] } | Message[]
    return Array.isArray(body) ? body : body.data
  }

  beforeAll(async () => {
    server = await startReferenceServer(env)
    alice = await signup(server.url, `alice-${run}@x.io`)
    bob = await signup(server.url, `bob-${run}@x.io`)
  })
  afterAll(async () => {
    for (const socket of sockets) socket.disconnect()
    await server.close()
  })

  it('makes one message of 20 identical keyed POSTs sent in parallel, and answers all of them with it', async () => {
    const text = `parallel ${run}`
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(alice, `"p-${run}"`, { text })))
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(201))
    for (const answer of answers) expect(answer.body).toEqual(answers[0]!.body)
    expect(await messagesWith(text)).toHaveLength(1)
  })

  it('accepts the bare token form, and a repeat later answers the stored answer', async () => {
    const text = `bare ${run}`
    const first = await post(alice, `8e03978e-40d5-43e8-bc93-${run}`, { text })
    const again = await post(alice, `"8e03978e-40d5-43e8-bc93-${run}"`, { text })
    expect([first.status, again.status]).toEqual([201, 201])
    expect(again.body).toEqual(first.body)
    expect(await messagesWith(text)).toHaveLength(1)
  })

  it('writes anew without a key, and keeps keys apart per user', async () => {
    const text = `scoped ${run}`
    await post(alice, undefined, { text })
    await post(alice, undefined, { text })
    const mine = await post(alice, `"s-${run}"`, { text })
    const theirs = await post(bob, `"s-${run}"`, { text })
    expect(theirs.status).toBe(201)
    expect((theirs.body as Message).id).not.toEqual((mine.body as Message).id)
    expect(await messagesWith(text)).toHaveLength(4)
  })

  it('refuses the same key with another body (422), and malformed or over-long keys (400)', async () => {
    expect((await post(alice, `"m-${run}"`, { text: `one ${run}` })).status).toBe(201)
    const other = await post(alice, `"m-${run}"`, { text: `two ${run}` })
    expect(other.status).toBe(422)
    expect(other.body).toMatchObject({ name: 'Unprocessable', code: 422 })
    expect(await messagesWith(`two ${run}`)).toHaveLength(0)
    for (const key of ['"unterminated', 'two words', '""', `"${'k'.repeat(256)}"`, '"a", "b"']) {
      const refused = await post(alice, key, { text: `bad ${run}` })
      expect([key, refused.status]).toEqual([key, 400])
      expect(refused.body).toMatchObject({ name: 'BadRequest' })
    }
    expect((await post(alice, `"${'k'.repeat(255)}"`, { text: `long ${run}` })).status).toBe(201)
  })

  it('answers a repeated keyed PATCH and DELETE with the first answer, and writes them once', async () => {
    const created = (await post(alice, undefined, { text: `edit ${run}` })).body as Message
    const path = `/messages/${created.id}`
    const patch = () =>
      request(server.url, 'PATCH', path, {
        body: { text: `edited ${run}` },
        token: alice.token,
        headers: { 'Idempotency-Key': `"e-${run}"` }
      })
    const [first, second] = await Promise.all([patch(), patch()])
    expect(first.status).toBe(200)
    expect(second.body).toEqual(first.body)
    const remove = () =>
      request(server.url, 'DELETE', path, { token: alice.token, headers: { 'Idempotency-Key': `"d-${run}"` } })
    const removed = await remove()
    expect(removed.status).toBe(200)
    // Without its key the repeat would be a 404: the message is gone.
    const again = await remove()
    expect(again.status).toBe(200)
    expect(again.body).toEqual(removed.body)
  })

  it('makes one message of 10 keyed socket calls sent at once, with one created event', async () => {
    const writer = await connectSocket(server.url, alice.token)
    const watcher = await connectSocket(server.url, bob.token)
    sockets.push(writer, watcher)
    const text = `socket ${run}`
    const events: Message[] = []
    watcher.on('messages created', (message: Message) => {
      if (message.text === text) events.push(message)
    })
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => call(writer, 'create', 'messages', { text }, { $idempotencyKey: `k-${run}` }))
    )
    for (const answer of answers) expect(answer).toEqual([null, answers[0]![1]])
    expect(await messagesWith(text)).toHaveLength(1)
    // A later event, so that a second `created` of the keyed message would have arrived before it.
    await call(writer, 'create', 'messages', { text: `after ${run}` })
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(events).toHaveLength(1)
    const refused = await call(writer, 'create', 'messages', { text }, { $idempotencyKey: 'two words' })
    expect(refused[0]).toMatchObject({ name: 'BadRequest', code: 400 })
  })
})
