import pg from 'pg'
import type { R, RDatum } from 'rethinkdb-ts'
import { signUp } from '../../src/testing/instances/instance-calls.js'

/*
 * The databases the chaos harness (chaos-harness.ts) runs on, seen from outside the app: the settings that point
 * an instance at the database, every message text written (one entry per stored row, so a double shows twice), and
 * which of some texts are committed already (read while replies are held back, to kill between commit and reply).
 */
export interface ChaosStore {
  name: string
  /** The instance's environment for this database (STORE and its URL). */
  env: Record<string, string>
  /** The text of every message in the database, one entry per row. */
  texts(): Promise<string[]>
  /** Which of `texts` are in the database now. */
  present(texts: string[]): Promise<string[]>
  close(): Promise<void>
}

export function postgresChaosStore(url: string): ChaosStore {
  const pool = new pg.Pool({ connectionString: url, max: 2 })
  const column = async (sql: string, values: unknown[] = []) =>
    (await pool.query<{ text: string }>(sql, values)).rows.map((row) => row.text)
  return {
    name: 'postgres',
    env: { STORE: 'postgres', POSTGRES_URL: url },
    texts: () => column("SELECT doc->>'text' AS text FROM messages"),
    present: (texts) => column("SELECT doc->>'text' AS text FROM messages WHERE doc->>'text' = ANY($1)", [texts]),
    close: () => pool.end()
  }
}

/** `r`: a driver with a pool on the server (test/support/rethinkdb-server.ts); `url` names the database. */
export function rethinkdbChaosStore(r: R, url: string): ChaosStore {
  const db = new URL(url).pathname.slice(1)
  const table = () => r.db(db).table('messages')
  return {
    name: 'rethinkdb',
    env: { STORE: 'rethinkdb', RETHINKDB_URL: url },
    texts: () => table()('text').coerceTo('array').run() as Promise<string[]>,
    present: (texts) =>
      table()
        .filter((doc: RDatum) => r.expr(texts).contains(doc('text')))('text')
        .coerceTo('array')
        .run() as Promise<string[]>,
    close: () => Promise.resolve()
  }
}

/**
 * Whether the store behind `url` honours idempotency keys, asked of the running app itself: the same keyed create
 * twice over REST, then how many rows it made. A store without keys (`Store.keyedWrites`) writes it twice.
 */
export async function storeHonoursKeys(url: string, store: ChaosStore): Promise<boolean> {
  const token = await signUp(url, 'chaos-probe@x.io')
  const text = `keys probe ${Date.now()}`
  for (let attempt = 0; attempt < 2; attempt++) {
    const response = await fetch(`${url}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': `"${text}"` },
      body: JSON.stringify({ text })
    })
    if (response.status !== 201) throw new Error(`the keys probe answered ${response.status}: ${await response.text()}`)
  }
  return (await store.present([text])).length === 1
}
