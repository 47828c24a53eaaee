import { authenticate } from '@feathersjs/authentication'
import { hooks as localHooks } from '@feathersjs/authentication-local'
import expressModule, { errorHandler, json, notFound, rest, urlencoded } from '@feathersjs/express'
import { feathers, type Application, type HookContext } from '@feathersjs/feathers'
import { MemoryService } from '@feathersjs/memory'
import socketio from '@feathersjs/socketio'
import type { Channel, RealTimeConnection } from '@feathersjs/transport-commons'
import { feathersAuthenticationService } from './feathers-auth.js'

/**
 * The anchor of the cold-start and idle-RSS rows: what `node dist/plumage.mjs` serves (src/reference-app.ts),
 * built the Feathers v5 way: express REST + socket.io, memory services, local + JWT authentication,
 * `messages` behind a JWT, `users` with open signup, the generated app's channels. A generated app
 * loads more than this (configuration, schemas, a logger), so this anchor is the generous one.
 * Listens on 127.0.0.1:$PORT like main.js.
 */
const app = expressModule.default(feathers())
app.use(json())
app.use(urlencoded({ extended: true }))
app.configure(rest())
app.configure(socketio())
app.use('authentication', feathersAuthenticationService(app as unknown as Application))
app.use('users', new MemoryService({ paginate: { default: 10, max: 50 } }))
app.use('messages', new MemoryService({ paginate: { default: 10, max: 50 }, multi: ['patch', 'remove'] }))
const jwt = authenticate('jwt')
app.service('users').hooks({
  before: { find: [jwt], get: [jwt], update: [jwt, localHooks.hashPassword('password')], patch: [jwt, localHooks.hashPassword('password')], remove: [jwt], create: [localHooks.hashPassword('password')] },
  after: { all: [localHooks.protect('password')] }
})
app.service('messages').hooks({
  before: {
    all: [jwt],
    create: [(context: HookContext) => { context.data = { ...context.data, userId: context.params.user?.id } }]
  }
})
const channels = app as unknown as { channel(name: string): Channel; publish(fn: () => Channel): void }
app.on('connection', (connection: RealTimeConnection) => channels.channel('anonymous').join(connection))
app.on('login', (_result: unknown, { connection }: { connection?: RealTimeConnection }) => {
  if (!connection) return
  channels.channel('anonymous').leave(connection)
  channels.channel('authenticated').join(connection)
})
channels.publish(() => channels.channel('authenticated'))
app.use(notFound())
app.use(errorHandler({ logger: false }))
await app.listen(Number(process.env.PORT ?? 3030), '127.0.0.1')
