import { KnexService } from '@feathersjs/knex'
import feathersSync from 'feathers-sync'
import knex from 'knex'
import { createFeathersReferenceApp } from './feathers-reference-app.js'
import { announce } from './seed.js'

/**
 * The anchors of `npm run bench:realtime`: one instance of the Feathers v5 reference app
 * (feathers-reference-app.ts: local + JWT login, events to the 'authenticated' channel) joined to the
 * others by feathers-sync over Redis ($REDIS_URL). feathers-sync sends every service event through
 * Redis, and every instance (the sender too) publishes it to its own connections.
 * - With $POSTGRES_URL: `users` and `messages` are @feathersjs/knex services on that PostgreSQL (the
 *   tables exist already, see postgres.ts), shared by every instance — what a Feathers user runs.
 * - Without: memory services, each instance its own data (no durable write: the ceiling).
 * The Redis channel is $SYNC_KEY (default feathers-sync). bcrypt cost $BCRYPT_ROUNDS (default 10). Prints READY <port>.
 */
const uri = process.env.REDIS_URL
if (!uri) throw new Error('REDIS_URL must be set (redis://127.0.0.1:<port>)')
const postgres = process.env.POSTGRES_URL
// knex's default pool (2 to 10 connections), as a generated app gets it.
const db = postgres ? knex({ client: 'pg', connection: postgres }) : undefined
const app = createFeathersReferenceApp({
  // A CommonJS module: its exports object is init() and also carries it as `default`.
  // Its own Redis channel per anchor ($SYNC_KEY): anchors sharing a channel would publish each other's events.
  configure: (app) => app.configure(feathersSync.default({ uri, key: process.env.SYNC_KEY ?? 'feathers-sync' })),
  hashSize: Number(process.env.BCRYPT_ROUNDS ?? 10),
  ...(db ? { service: (name, options) => new KnexService({ ...options, Model: db, name }) } : {})
})
await (app as unknown as { sync: { ready: Promise<unknown> } }).sync.ready
if (db) await db.raw('SELECT 1')
const server = await app.listen(0, '127.0.0.1')
if (!server.listening) await new Promise((resolve) => server.once('listening', resolve))
announce((server.address() as { port: number }).port)
