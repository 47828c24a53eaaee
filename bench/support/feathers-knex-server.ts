import { KnexService } from '@feathersjs/knex'
import knex from 'knex'
import { createFeathersReferenceApp } from './feathers-reference-app.js'
import { announce } from './seed.js'

/**
 * The anchor of the HTTP rows of `npm run bench:postgres`: one instance of the Feathers v5 reference app
 * (feathers-reference-app.ts: local + JWT login, `messages` behind authenticate('jwt')) with `users` and
 * `messages` as @feathersjs/knex services on $POSTGRES_URL (tables made by postgres-http.ts), knex's
 * default pool — what a generated Feathers app on PostgreSQL runs. bcrypt cost $BCRYPT_ROUNDS (default 10).
 * Prints READY <port>.
 */
const postgres = process.env.POSTGRES_URL
if (!postgres) throw new Error('POSTGRES_URL must be set')
const db = knex({ client: 'pg', connection: postgres })
const app = createFeathersReferenceApp({
  hashSize: Number(process.env.BCRYPT_ROUNDS ?? 10),
  service: (name, options) => new KnexService({ ...options, Model: db, name })
})
await db.raw('SELECT 1')
const server = await app.listen(0, '127.0.0.1')
if (!server.listening) await new Promise((resolve) => server.once('listening', resolve))
announce((server.address() as { port: number }).port)
