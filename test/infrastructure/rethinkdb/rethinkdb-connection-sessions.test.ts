import { afterAll, describe, expect, it } from '@jest/globals'
import { RethinkDbConnectionSessions } from '../../../src/infrastructure/rethinkdb/rethinkdb-connection-sessions.js'
import { FakeClock } from '../../support/fake-clock.js'
import { discoverRethinkDb, type RethinkDbTestServer } from '../../support/rethinkdb-server.js'

// Needs a real RethinkDB (RETHINKDB_URL, or Docker); skipped with the run's one loud line otherwise.
const server: RethinkDbTestServer | null = await discoverRethinkDb()

afterAll(async () => {
  await server?.stop()
})

const withRethinkDb = server ? describe : describe.skip
const SECRET = 'a secret of at least sixteen characters'
let tables = 0

withRethinkDb('RethinkDbConnectionSessions', () => {
  const clock = new FakeClock()
  const make = (options: { table?: string; secret?: string } = {}) =>
    new RethinkDbConnectionSessions({
      r: server!.r,
      db: server!.db,
      clock,
      windowMs: 1000,
      table: options.table ?? `sessions_${++tables}`,
      secret: options.secret ?? SECRET
    })

  // The ConnectionSessions contract runs on this adapter from the kit: rethinkdb.contract.test.ts. Here: what it adds.
  it('stores neither the private session id nor the access token in clear', async () => {
    const sessions = make()
    await sessions.save({
      id: 'private-id',
      connectionId: 's1',
      authentication: { strategy: 'jwt', accessToken: 'secret-token' }
    })
    const rows = JSON.stringify(await server!.r.db(server!.db).table(sessions.tableName).coerceTo('array').run())
    expect(rows).toContain('s1')
    expect(rows).not.toContain('private-id')
    expect(rows).not.toContain('secret-token')
  })

  it('does not restore a login sealed with another secret (or a per-process key)', async () => {
    const table = `sessions_${++tables}`
    await make({ table }).save({ id: 'p1', connectionId: 's1', authentication: { strategy: 'jwt', accessToken: 't' } })
    await make({ table }).save({ id: 'anonymous', connectionId: 's2' })
    const other = make({ table, secret: 'another secret of sixteen characters' })
    expect(await other.load('p1')).toBeUndefined()
    expect(await other.load('anonymous')).toEqual({ id: 'anonymous', connectionId: 's2' })
  })

  it('keeps a connected session however old; a lost one expires after the window and is purged', async () => {
    const sessions = make()
    await sessions.save({ id: 'connected', connectionId: 'a' })
    await sessions.save({ id: 'lost', connectionId: 'b', disconnectedAt: clock.now() })
    clock.advance(1000)
    expect(await sessions.load('lost')).toBeDefined()
    clock.advance(60_000)
    expect(await sessions.load('lost')).toBeUndefined()
    expect(await sessions.load('connected')).toBeDefined()
    await sessions.save({ id: 'another', connectionId: 'c' })
    const table = server!.r.db(server!.db).table(sessions.tableName)
    // The purge runs after the save answered: wait for the row to go (the test times out if it never does).
    while ((await table.hasFields('connectionId').count().run()) !== 2)
      await new Promise((resolve) => setTimeout(resolve, 20))
    // This instance's own sessions stay, however late its heartbeat on this clock.
    expect(await sessions.load('connected')).toBeDefined()
    await sessions.close()
  })

  it('purges the sessions a silent (killed) instance held as connected once they expired, and its heartbeat', async () => {
    const table = `sessions_${++tables}`
    const killed = make({ table })
    await killed.save({ id: 'held', connectionId: 'a' })
    await killed.close()
    const rows = server!.r.db(server!.db).table(table)
    expect(await rows.count().run()).toBe(2)
    clock.advance(60_000)
    const alive = make({ table })
    await alive.save({ id: 'live', connectionId: 'b' })
    // Only the live instance's session and heartbeat are left (the test times out if the purge never comes).
    while ((await rows.count().run()) !== 2) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(await alive.load('held')).toBeUndefined()
    expect(await alive.load('live')).toEqual({ id: 'live', connectionId: 'b' })
    await alive.close()
  })
})
