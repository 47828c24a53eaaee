import { afterAll, describe, expect, it } from '@jest/globals'
import type { RTable } from 'rethinkdb-ts'
import type { Data } from '../../../src/domain/service/service.js'
import { stillCurrent } from '../../../src/infrastructure/rethinkdb/table-watch.js'
import { discoverRethinkDb } from '../../support/rethinkdb-server.js'

/*
 * A table change that the event log did not account for in time is logged as a direct write — also a store's own
 * write whose log row came late on a busy server (the RethinkDB live oracle found one logged again after a later
 * write of the same record, which set the record back on every instance). It is logged only while the record is
 * still what the change says.
 */
const server = await discoverRethinkDb()
const withServer = server ? describe : describe.skip

afterAll(async () => {
  await server?.stop()
})

withServer('a direct write is logged only while the record still is what its change says', () => {
  it('logs a change of a record only while the record is what it says; a creation or removal always', async () => {
    const { r, db } = server!
    await r.db(db).tableCreate('current_check').run()
    const table = r.db(db).table('current_check') as unknown as RTable<Data>
    const at = new Date('2026-01-01T00:00:00Z')
    await table.insert({ id: 'a', tag: 'c', n: 3, at, nested: { k: [1, 2] } }).run()
    const check = (event: string, record: Data) => stillCurrent(r, table, 'id', { event, record }).run()
    expect(await check('patched', { id: 'a', tag: 'c', n: 3, at, nested: { k: [1, 2] } })).toBe(true)
    expect(await check('patched', { id: 'a', n: 3, at, tag: 'c', nested: { k: [1, 2] } })).toBe(true)
    await table.get('a').update({ tag: 'd' }).run()
    // A later write changed it: the older change is not logged; a creation and a removal always are.
    expect(await check('patched', { id: 'a', tag: 'c', n: 3, at, nested: { k: [1, 2] } })).toBe(false)
    expect(await check('created', { id: 'a', tag: 'c', n: 3, at, nested: { k: [1, 2] } })).toBe(true)
    await table.get('a').delete().run()
    expect(await check('patched', { id: 'a', tag: 'd', n: 3, at, nested: { k: [1, 2] } })).toBe(false)
    expect(await check('removed', { id: 'a', tag: 'd', n: 3, at, nested: { k: [1, 2] } })).toBe(true)
  })
})
