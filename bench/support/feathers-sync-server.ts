import feathersSync from 'feathers-sync'
import { createFeathersReferenceApp } from './feathers-reference-app.js'
import { announce } from './seed.js'

/**
 * The anchor of `npm run bench:realtime`: one instance of the Feathers v5 reference app
 * (feathers-reference-app.ts: memory services, local + JWT login, events to the 'authenticated'
 * channel) joined to the others by feathers-sync over Redis ($REDIS_URL). Each instance keeps its own
 * data; feathers-sync sends every service event through Redis, and every instance (the sender too)
 * publishes it to its own connections. bcrypt cost $BCRYPT_ROUNDS (default 10). Prints READY <port>.
 */
const uri = process.env.REDIS_URL
if (!uri) throw new Error('REDIS_URL must be set (redis://127.0.0.1:<port>)')
const app = createFeathersReferenceApp({
  // A CommonJS module: its exports object is init() and also carries it as `default`.
  configure: (app) => app.configure(feathersSync.default({ uri })),
  hashSize: Number(process.env.BCRYPT_ROUNDS ?? 10)
})
await (app as unknown as { sync: { ready: Promise<unknown> } }).sync.ready
const server = await app.listen(0, '127.0.0.1')
if (!server.listening) await new Promise((resolve) => server.once('listening', resolve))
announce((server.address() as { port: number }).port)
