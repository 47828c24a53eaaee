import { startPostgres as startServer, type PostgresServer } from '../../test/support/postgres-server.js'
import { track } from './processes.js'

/** Debian's PostgreSQL 15 (package postgresql-15). */
export const POSTGRES_BIN = process.env.POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin'

export type Postgres = Pick<PostgresServer, 'url' | 'pid' | 'stop'>

/**
 * A PostgreSQL cluster of its own for the benches (test/support/postgres-server.ts: a temporary
 * folder, a free loopback port, durable as shipped), its process tracked so that the driver kills
 * it on any way out.
 */
export function startPostgres(): Promise<Postgres> {
  return startServer({ bin: POSTGRES_BIN, spawned: (child) => void track(child) })
}

/**
 * The anchor's tables, as a Feathers v5 app generated for PostgreSQL would migrate them: `users` for
 * the local strategy, `messages` with the fields the bench's creates carry (`from` is quoted by knex).
 * Dropped and made again for every instance count, so each starts empty.
 */
export const ANCHOR_TABLES_SQL = `
  DROP TABLE IF EXISTS messages, users;
  CREATE TABLE users (id serial PRIMARY KEY, email text NOT NULL UNIQUE, password text NOT NULL);
  CREATE TABLE messages (id serial PRIMARY KEY, text text NOT NULL, t double precision, "from" integer, p integer, "userId" integer);
`
