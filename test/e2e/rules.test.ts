import { afterAll, beforeAll, expect, it } from '@jest/globals'
import authClientModule from '@feathersjs/authentication-client'
import { feathers, type Application } from '@feathersjs/feathers'
import restClientModule from '@feathersjs/rest-client'
import socketioClientModule from '@feathersjs/socketio-client'
import { io, type Socket } from 'socket.io-client'
import { authentication } from '../../src/interfaces/client/authentication/authentication-client.js'
import { createClient } from '../../src/interfaces/client/client-app.js'
import { rest } from '../../src/interfaces/client/rest/rest-client.js'
import { socketio } from '../../src/interfaces/client/socket/socketio-transport.js'
import type { AuthServer } from '../support/auth-server.js'
import { signup, startReferenceServer, type Session } from '../support/reference-server.js'

/*
 * The chat's rules end to end (src/services/<name>/<name>.rules.ts), three users over REST and socket.io with
 * plumage's clients and the official Feathers ones: a public message reaches everyone, a direct message only its
 * author and recipient (the third user neither finds, gets nor receives it), a stranger's edit is a 403, and a user
 * made admin removes someone else's message.
 */
const socketioClient = socketioClientModule.default
const restClient = restClientModule.default
type FeathersSocket = Parameters<typeof socketioClient>[0]

let server: AuthServer
let ann: Session, bob: Session, cid: Session
const sockets: Socket[] = []
/** What each user's socket received: `created`/`removed` and the message text. */
const received: Record<string, string[]> = { ann: [], bob: [], cid: [] }

/** A client (plumage's for ann, the official ones for bob and cid) logged in over its own socket. */
async function socketClient(name: string, session: Session) {
  const socket = io(server.url, { transports: ['websocket'], forceNew: true, reconnection: false })
  sockets.push(socket)
  const credentials = { strategy: 'local', email: session.email, password: 'secret-pw' }
  let client: { service(path: string): { on(event: string, listener: (data: unknown) => void): unknown } }
  if (name === 'ann') {
    const ours = createClient().configure(socketio(socket)).configure(authentication())
    await ours.authenticate(credentials)
    client = ours as never
  } else {
    const official = feathers()
      .configure(socketioClient(socket as unknown as FeathersSocket))
      .configure(authClientModule.default({ storage: new authClientModule.MemoryStorage() }))
    await official.authenticate(credentials)
    client = official
  }
  for (const event of ['created', 'removed'])
    client.service('messages').on(event, (data) => received[name]!.push(`${event} ${(data as { text: string }).text}`))
  return client as unknown as Application
}

const officialRest = (token: string): Application =>
  feathers()
    .configure(restClient(server.url).fetch(fetch, { headers: { Authorization: `Bearer ${token}` } }))
    .configure(authClientModule.default({ storage: new authClientModule.MemoryStorage() }))
const oursRest = (token: string) =>
  createClient()
    .configure(rest(server.url).fetch(fetch, { headers: { Authorization: `Bearer ${token}` } }))
    .configure(authentication())

/** Resolves once every user's socket received `count` events (or fails the test after 2 s). */
async function until(name: string, count: number): Promise<void> {
  for (let waited = 0; received[name]!.length < count; waited += 10) {
    if (waited > 2000) throw new Error(`${name} received ${JSON.stringify(received[name])}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

let annSocket: Application, bobSocket: Application, cidSocket: Application

beforeAll(async () => {
  server = await startReferenceServer()
  ann = await signup(server.url, 'ann@rules.io')
  bob = await signup(server.url, 'bob@rules.io')
  cid = await signup(server.url, 'cid@rules.io')
  annSocket = await socketClient('ann', ann)
  bobSocket = await socketClient('bob', bob)
  cidSocket = await socketClient('cid', cid)
})
afterAll(async () => {
  for (const socket of sockets) socket.disconnect()
  await server.close()
})

it('a public message reaches everyone; a direct message only its author and recipient', async () => {
  await oursRest(ann.token).service('messages').create({ text: 'hello all' })
  await (annSocket.service('messages') as never as { create(d: object): Promise<unknown> }).create({
    text: 'psst bob',
    to: bob.id
  })
  await officialRest(cid.token).service('messages').create({ text: 'cid here' })
  for (const name of ['ann', 'bob', 'cid']) await until(name, name === 'cid' ? 2 : 3)
  expect(received.ann).toEqual(['created hello all', 'created psst bob', 'created cid here'])
  expect(received.bob).toEqual(['created hello all', 'created psst bob', 'created cid here'])
  expect(received.cid).toEqual(['created hello all', 'created cid here'])

  const cidFinds = (await officialRest(cid.token)
    .service('messages')
    .find({ query: { $limit: 50 } })) as {
    data: { text: string }[]
  }
  expect(cidFinds.data.map((message) => message.text)).not.toContain('psst bob')
  const bobFinds = (await cidSocket.service('messages').find({ query: { text: 'psst bob' } })) as { total: number }
  expect(bobFinds.total).toBe(0)
  const direct = (await bobSocket.service('messages').find({ query: { text: 'psst bob' } })) as {
    data: { id: number }[]
  }
  expect(direct.data).toHaveLength(1)
  const id = direct.data[0]!.id
  for (const get of [
    () => officialRest(cid.token).service('messages').get(id),
    () => cidSocket.service('messages').get(id),
    () => oursRest(cid.token).service('messages').get(id)
  ]) {
    await expect(get()).rejects.toMatchObject({ code: 404, message: `No record found for id '${id}'` })
  }
  await expect(oursRest(bob.token).service('messages').get(id)).resolves.toMatchObject({ text: 'psst bob' })
})

it("a stranger's edit is a 403; made admin, they remove someone else's message", async () => {
  const [hello] = (
    (await oursRest(ann.token)
      .service('messages')
      .find({ query: { text: 'hello all' } })) as unknown as { data: { id: number }[] }
  ).data
  await expect(officialRest(cid.token).service('messages').patch(hello!.id, { text: 'mine' })).rejects.toMatchObject({
    code: 403
  })
  await expect(cidSocket.service('messages').remove(hello!.id)).rejects.toMatchObject({ code: 403 })
  // Only an admin sets a role: cid cannot make themselves one.
  await expect(officialRest(cid.token).service('users').patch(cid.id, { role: 'admin' })).rejects.toMatchObject({
    code: 403,
    message: "You may not set 'role' in 'users'"
  })
  await server.app.service('users').patch(cid.id, { role: 'admin' })
  // The JWT strategy reuses a loaded user for up to 1 s; this instance evicted it at once.
  await expect(cidSocket.service('messages').remove(hello!.id)).resolves.toMatchObject({ text: 'hello all' })
  for (const name of ['ann', 'bob', 'cid']) await until(name, name === 'cid' ? 3 : 4)
  expect(received.bob.at(-1)).toBe('removed hello all')
})
