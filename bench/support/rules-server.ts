import 'reflect-metadata'
import { AbilityBuilder, createAliasResolver, createMongoAbility } from '@casl/ability'
import { authenticate } from '@feathersjs/authentication'
import expressModule, { json, rest } from '@feathersjs/express'
import { feathers, type Application, type HookContext } from '@feathersjs/feathers'
import { MemoryService } from '@feathersjs/memory'
import socketio from '@feathersjs/socketio'
import type { Channel, RealTimeConnection } from '@feathersjs/transport-commons'
import { feathersCasl, getChannelsWithReadAbility } from 'feathers-casl'
import type { AddressInfo } from 'node:net'
import { App } from '../../src/application/app.js'
import { buildContainer, createHttpEngine, startRealtime } from '../../src/container.js'
import { modules } from '../../src/modules/index.js'
import { benchConfig } from './plumage-config.js'
import { feathersAuthenticationService } from './feathers-auth.js'

/**
 * One server of `npm run bench:rules` (bench/rules.ts), forked with an IPC channel. RULES_SERVER names it:
 * - plumage: the reference app as `npm start` serves it (src/container.ts, memory store, sessions, recovery);
 * - plumage-plain: the same app built without its rules module (`buildContainer(config, { modules })`);
 * - feathers-casl: Feathers v5 (express + socket.io, memory services, JWT) with feathers-casl: the reference chat's
 *   rules as a CASL ability per connection (made at login) and feathers-casl's `getChannelsWithReadAbility` as the
 *   publisher, the way its documentation sets it up.
 * Both seed RULES_USERS users. Answers `{ id, type }` with `{ id, value }`: `setup` (a token per user and whether
 * the app applies rules to events: for plumage, a direct message from user 0 to user 1 that user 2 can get means
 * it does not), `cpu`
 * (process.cpuUsage) and `stream` (`creates` messages created on the server one after another, each by user
 * `i % users`, every `directEvery`-th a direct message to the next user; answered when all were created).
 */
const kind = process.env.RULES_SERVER ?? 'plumage'
const USERS = Number(process.env.RULES_USERS ?? 500)

interface Started {
  url: string
  /** An access token per user, user i at index i. */
  tokens: string[]
  create(data: Record<string, unknown>, author: number): Promise<unknown>
}

const email = (i: number) => `user${i}@example.com`

async function startPlumage(withRules: boolean): Promise<Started> {
  const config = benchConfig({ BCRYPT_ROUNDS: '4' })
  // Without its rules: the registry without the rules module, as a clone that deleted it.
  const { rules: _rules, ...others } = modules
  const container = await buildContainer(config, withRules ? {} : { modules: others })
  const app = container.get<App>(App)
  await app.setup()
  const engine = createHttpEngine(container)
  startRealtime(container, engine.server)
  const http = await engine.listen(0, '127.0.0.1')
  const users: Record<string, unknown>[] = []
  const tokens: string[] = []
  for (let i = 0; i < USERS; i++) {
    users.push((await app.service('users').create({ email: email(i), password: 'bench-password' })) as never)
    const login = await app
      .service('authentication')
      .create({ strategy: 'local', email: email(i), password: 'bench-password' })
    tokens.push((login as { accessToken: string }).accessToken)
  }
  return {
    url: http.url,
    tokens,
    // An internal call as the author (the server stamps `userId` from params.user), as a hook or job would make it.
    create: (data, author) => app.service('messages').create(data, { user: users[author] } as never)
  }
}

/** The reference chat's rules (the rules branch's messages.rules.ts and users.rules.ts) as a CASL ability. */
function abilityOf(user: { id: number; role?: string }) {
  const { can, build } = new AbilityBuilder(createMongoAbility)
  can('read', 'messages', { to: null })
  can('read', 'messages', { userId: user.id })
  can('read', 'messages', { to: user.id })
  can('create', 'messages')
  can(['update', 'patch', 'remove'], 'messages', { userId: user.id })
  if (user.role === 'admin') can('remove', 'messages')
  can('read', 'users')
  can(['update', 'patch', 'remove'], 'users', { id: user.id })
  return build({ resolveAction: createAliasResolver({ read: ['get', 'find'] }) })
}

async function startFeathersCasl(): Promise<Started> {
  const app = expressModule.default(feathers())
  app.use(json())
  app.configure(rest())
  app.configure(socketio())
  app.configure(feathersCasl())
  app.use('authentication', feathersAuthenticationService(app as unknown as Application))
  app.use('users', new MemoryService({ paginate: { default: 10, max: 50 } }) as never)
  app.use('messages', new MemoryService({ paginate: { default: 10, max: 50 } }) as never)
  const jwt = authenticate('jwt')
  app.service('users').hooks({ before: { find: [jwt], get: [jwt] } })
  app.service('messages').hooks({
    before: {
      all: [jwt],
      // The author from the login, and `to: null` stored for a public message (CASL's `{ to: null }` matches null).
      create: [
        (context: HookContext) => {
          context.data = { to: null, ...context.data, userId: context.params.user?.id }
        }
      ]
    }
  })
  const channels = app as unknown as { channel(name: string | string[]): Channel; publish(fn: unknown): void }
  app.on('connection', (connection: RealTimeConnection) => channels.channel('anonymous').join(connection))
  app.on('login', (result: { user: { id: number } }, { connection }: { connection?: RealTimeConnection }) => {
    if (!connection) return
    connection.ability = abilityOf(result.user)
    channels.channel('anonymous').leave(connection)
    channels.channel('authenticated').join(connection)
  })
  channels.publish((data: unknown, context: HookContext) =>
    getChannelsWithReadAbility(app as unknown as Application, data as never, context)
  )
  const http = await app.listen(0, '127.0.0.1')
  if (!http.listening) await new Promise((resolve) => http.once('listening', resolve))
  const auth = app.service('authentication') as unknown as {
    createAccessToken(payload: object, options: object): Promise<string>
  }
  const users: { id: number }[] = []
  const tokens: string[] = []
  for (let i = 0; i < USERS; i++) {
    // No password: sockets log in with the token (strategy jwt), so no login needs a hash.
    users.push((await app.service('users').create({ email: email(i) })) as never)
    tokens.push(await auth.createAccessToken({}, { subject: String(users[i]!.id) }))
  }
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    tokens,
    create: (data, author) => app.service('messages').create(data as never, { user: users[author] } as never)
  }
}

/** Whether user 2 can find a direct message from user 0 to user 1 over REST: if not, the app applies rules. */
async function appliesRules(server: Started): Promise<boolean> {
  const post = await fetch(`${server.url}/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.tokens[0]}`, 'content-type': 'application/json' },
    body: JSON.stringify({ text: 'probe', to: await userId(server, 1) })
  })
  const { id } = (await post.json()) as { id: unknown }
  const found = await fetch(`${server.url}/messages/${id}`, {
    headers: { authorization: `Bearer ${server.tokens[2]}` }
  })
  return found.status !== 200
}

/** User i's id as the server gave it (the users were created in order). */
async function userId(server: Started, i: number): Promise<unknown> {
  const response = await fetch(`${server.url}/users?email=${encodeURIComponent(email(i))}`, {
    headers: { authorization: `Bearer ${server.tokens[0]}` }
  })
  return ((await response.json()) as { data: { id: unknown }[] }).data[0]!.id
}

const server = kind === 'feathers-casl' ? await startFeathersCasl() : await startPlumage(kind === 'plumage')
const ids: unknown[] = []
for (let i = 0; i < USERS; i++) ids.push(await userId(server, i))

process.on('message', (message: { id: number; type: string; creates?: number; directEvery?: number }) => {
  const reply = (value: unknown) => process.send!({ id: message.id, value })
  // feathers-casl is set up here for events only (its `authorize` hooks on calls are not what is measured): its
  // publisher applies the rules, which the REST probe cannot see.
  if (message.type === 'setup')
    void (kind === 'feathers-casl' ? Promise.resolve(true) : appliesRules(server)).then((rules) =>
      reply({ url: server.url, tokens: server.tokens, rules })
    )
  else if (message.type === 'cpu') reply(process.cpuUsage())
  else if (message.type === 'stream')
    void (async () => {
      for (let i = 0; i < message.creates!; i++) {
        const author = i % USERS
        const direct = i % message.directEvery! === message.directEvery! - 1
        await server.create(
          direct ? { text: `direct ${i}`, to: ids[(author + 1) % USERS] } : { text: `public ${i}` },
          author
        )
        // Lets the event's writes go out before the next create, as creates from clients would.
        await new Promise((resolve) => setImmediate(resolve))
      }
      reply(null)
    })()
})
process.once('SIGTERM', () => process.exit(0))
process.send!({ id: 0, value: 'listening' })
