import { describe, expect, it } from '@jest/globals'
import { createRequire } from 'node:module'
import { RethinkDBErrorType, type R } from 'rethinkdb-ts'
import { GeneralError } from '../../../src/domain/errors/errors.js'
import { silentLogger } from '../../../src/domain/logger.js'
import { ensureTable } from '../../../src/infrastructure/rethinkdb/rethinkdb-tables.js'

/*
 * What ensureTable asks of a user granted only on its database, over a stand-in `r` that answers
 * each query by its shape (`db(app).tableCreate(messages)`) and records what ran; the server's
 * permission errors are the words RethinkDB 2.4 uses. test/e2e/rethinkdb-secured.test.ts does the
 * same against a real server (RETHINKDB_BIN).
 */

/** A stand-in `r`: every chain of calls ends in `run()`, answered from `answers` (an Error is thrown). */
function fakeR(answers: Record<string, unknown>, ran: string[] = []): R {
  const node = (path: string): unknown =>
    new Proxy(() => undefined, {
      get: (_target, key) => {
        if (key === 'run') {
          return async () => {
            ran.push(path)
            const answer = answers[path]
            if (answer instanceof Error) throw answer
            return answer
          }
        }
        return (...args: unknown[]) =>
          node(`${path ? `${path}.` : ''}${String(key)}${typeof args[0] === 'string' ? `(${args[0]})` : ''}`)
      }
    })
  return node('') as R
}

/** The driver's error class (not exported by its index): what a query the server refused throws. */
const { RethinkDBError } = createRequire(import.meta.url)('rethinkdb-ts/lib/error/error') as {
  RethinkDBError: new (message: string, options: { type: RethinkDBErrorType }) => Error
}
const refused = (permission: string) =>
  new RethinkDBError(`User \`app\` does not have the required \`${permission}\` permission.`, {
    type: RethinkDBErrorType.PERMISSION_ERROR
  })

/** A database `app` that exists, with a ready table `messages` of primary key `id`. */
const existing = {
  dbList: ['app'],
  'db(app).tableList': ['messages'],
  'db(app).table(messages).wait': { ready: 1 },
  'db(app).table(messages).config': { primary_key: 'id', shards: [{ replicas: ['a'] }] }
}
const spec = { db: 'app', name: 'messages', primaryKey: 'id' }

describe('ensureTable for a user granted only on its database', () => {
  it('does not create a database that exists (dbCreate needs the server-wide config permission), nor read the system tables', async () => {
    const ran: string[] = []
    const r = fakeR(
      { ...existing, 'dbCreate(app)': refused('config'), 'db(rethinkdb).table(table_config).filter': refused('read') },
      ran
    )
    await expect(ensureTable(r, spec, silentLogger)).resolves.toBeUndefined()
    expect(ran).toEqual([
      'dbList',
      'db(app).tableList',
      'db(app).table(messages).wait',
      'db(app).table(messages).config'
    ])
  })

  it('creates a missing table, then checks it, without the system tables', async () => {
    const ran: string[] = []
    const r = fakeR(
      { ...existing, 'db(app).tableList': [], 'db(app).tableCreate(messages)': { tables_created: 1 } },
      ran
    )
    await expect(ensureTable(r, spec, silentLogger)).resolves.toBeUndefined()
    expect(ran).toContain('db(app).tableCreate(messages)')
    expect(ran.filter((query) => query.includes('rethinkdb'))).toEqual([])
  })

  it('says in one line which permission is missing, on which database, and the grant that fixes it', async () => {
    const r = fakeR({ ...existing, 'db(app).tableList': [], 'db(app).tableCreate(messages)': refused('config') })
    await expect(ensureTable(r, spec, silentLogger)).rejects.toThrow(
      new GeneralError(
        "RethinkDB user 'app' lacks the `config` permission on database 'app' " +
          "(needed to create and check its tables at startup; grant it with r.db('app').grant('app', {read: true, write: true, config: true}))"
      )
    )
  })

  it('says that an admin must create a database that does not exist', async () => {
    const r = fakeR({ ...existing, dbList: [], 'dbCreate(app)': refused('config') })
    await expect(ensureTable(r, spec, silentLogger)).rejects.toThrow(
      new GeneralError(
        "RethinkDB user 'app' may not create database 'app' " +
          "(that needs the `config` permission on the server): create it as admin with r.dbCreate('app'), then r.db('app').grant('app', {read: true, write: true, config: true})"
      )
    )
  })

  it('says that repairing a table created twice takes the admin user', async () => {
    const r = fakeR({
      ...existing,
      'db(app).table(messages).wait': new Error(
        'Table `app.messages` is ambiguous; there are multiple tables with that name.'
      ),
      'db(rethinkdb).table(table_config).filter': refused('read')
    })
    await expect(ensureTable(r, spec, silentLogger)).rejects.toThrow(
      new GeneralError(
        'RethinkDB table app.messages was created more than once ' +
          "(instances started at the same moment), and user 'app' may not repair it: that takes the admin user (it renames tables in rethinkdb.table_config). Start one instance as admin once."
      )
    )
  })
})
