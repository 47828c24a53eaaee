import { describe, expect, it } from '@jest/globals'
import { r } from 'rethinkdb-ts'
import { silentLogger } from '../../../src/domain/logger.js'
import type { StoreChange } from '../../../src/domain/store/store.js'
import { EventLog, type LoggedEvent } from '../../../src/infrastructure/rethinkdb/event-log.js'
import { TableWatch } from '../../../src/infrastructure/rethinkdb/table-watch.js'

// Building ReQL terms needs no connection: these tests read the term a logged write compiles to.
// That the log publishes on every instance is tested against a real server (test/e2e).

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
const insert = () => r.db('app').table('messages').insert({ text: 'hi' }, { returnChanges: true })
/** A logged write's table: its name in the events, and the term and key the check after numbering reads. */
const table = (name: string) => ({ name, term: r.db('app').table(name), idField: 'id' })
const messages = table('messages')

describe('the event log and trace context', () => {
  it("logs the writer's traceparent with each event, in the write's own query", () => {
    const log = new EventLog({ r, db: 'app', logger: silentLogger, traceparent: () => TRACEPARENT })
    // The writer's traceparent is the logging function's second argument, the write's result its first.
    const query = log.recording(insert(), messages, 'created').toString()
    expect(query).toContain(`.do("${TRACEPARENT}", (var_1, var_2) => var_1("changes")`)
    expect(query).toContain('record: var_3("new_val"), trace: var_2 }')
  })

  it('logs the events of every write of a table and event with the same function, whatever the records', () => {
    const log = new EventLog({ r, db: 'app', logger: silentLogger })
    const logging = (query: { toString(): string }, write: string) => {
      const text = query.toString()
      expect(text.startsWith(write)).toBe(true)
      return text.slice(write.length)
    }
    const first = r.db('app').table('messages').insert({ text: 'one' }, { returnChanges: true })
    const second = r
      .db('app')
      .table('messages')
      .insert([{ text: 'two' }, { text: 'three' }], { returnChanges: true })
    const once = logging(log.recording(first, messages, 'created'), first.toString())
    expect(logging(log.recording(second, messages, 'created'), second.toString())).toBe(once)
    expect(once).toContain('table: "messages", event: "created", record: var_2("new_val")')
    // Another event or table has its own function.
    const removed = logging(log.recording(first, messages, 'removed'), first.toString())
    expect(removed).toContain('event: "removed", record: var_2("old_val")')
    // A removal is superseded when its record is back (created again before its numbers were taken).
    expect(removed).toMatch(
      /\.hasFields\(r\.expr\(\[var_\d+\("record"\)\("id"\)\]\)\.coerceTo\("string"\)\)\.branch\(var_\d+\.merge\(\{ superseded: true \}\)/
    )
    expect(logging(log.recording(first, table('users'), 'created'), first.toString())).toContain('table: "users"')
  })

  it('logs no trace field when tracing is off or no span is active', () => {
    expect(
      new EventLog({ r, db: 'app', logger: silentLogger }).recording(insert(), messages, 'created').toString()
    ).not.toContain('trace')
    expect(
      new EventLog({ r, db: 'app', logger: silentLogger, traceparent: () => undefined })
        .recording(insert(), messages, 'created')
        .toString()
    ).not.toContain('trace')
  })

  it('hands the logged traceparent on with the change', () => {
    let deliver: (event: LoggedEvent) => void = () => undefined
    const events = {
      subscribe: (_table: string, listener: typeof deliver) => {
        deliver = listener
        return () => undefined
      }
    } as unknown as EventLog
    const watch = new TableWatch({ tableName: 'messages', idField: 'id', events, logger: silentLogger })
    const changes: StoreChange[] = []
    watch.subscribe((change) => changes.push(change))
    deliver({ id: 1, ts: 1, table: 'messages', event: 'created', record: { id: 'm1' }, trace: TRACEPARENT })
    deliver({ id: 2, ts: 2, table: 'messages', event: 'removed', record: { id: 'm1' } })
    expect(changes).toEqual([
      { event: 'created', record: { id: 'm1' }, trace: TRACEPARENT },
      { event: 'removed', record: { id: 'm1' } }
    ])
  })

  it('publishes no superseded event (its number is taken, its effect is in a later event of the record)', () => {
    let deliver: (event: LoggedEvent) => void = () => undefined
    const events = {
      subscribe: (_table: string, listener: typeof deliver) => {
        deliver = listener
        return () => undefined
      }
    } as unknown as EventLog
    const watch = new TableWatch({ tableName: 'messages', idField: 'id', events, logger: silentLogger })
    const changes: StoreChange[] = []
    watch.subscribe((change) => changes.push(change))
    deliver({ id: 1, ts: 1, table: 'messages', event: 'patched', record: { id: 'm1', n: 2 } })
    deliver({ id: 2, ts: 2, table: 'messages', event: 'patched', record: { id: 'm1', n: 1 }, superseded: true })
    expect(changes).toEqual([{ event: 'patched', record: { id: 'm1', n: 2 } }])
  })
})

describe("the event log's numbering", () => {
  it("numbers a write's events from the counter row and logs them as one row, in the write's own query", () => {
    const term = new EventLog({ r, db: 'app', logger: silentLogger })
      .recording(insert(), messages, 'created')
      .toString()
    // One atomic update takes as many numbers as there are events, without waiting for the disk…
    expect(term).toMatch(
      /table\("plumage_events_counter"\)\.get\("counter"\)\.update\(\(var_\d+\) => \{ seq: var_\d+\("seq"\)\.add\(var_\d+\) \}, \{ durability: "soft", returnChanges: "always" \}\)/
    )
    // …fails with the server's message when that update fails (its changes would carry the old number)…
    expect(term).toMatch(
      /\.do\(\(var_\d+\) => var_\d+\("errors"\)\.gt\(0\)\.branch\(r\.error\(var_\d+\("first_error"\)\)/
    )
    // …checks that no logged row holds them (a counter gone back), else moves the counter past the newest row…
    expect(term).toMatch(/\.le\(var_\d+\.sub\(var_\d+\)\)\.branch\(var_\d+, /)
    expect(term).toContain('{ seq: var_6("seq").lt(var_5).branch(var_5, var_6("seq")) }')
    // …then reads the written records and marks those the table no longer holds as written (a later write of the
    // record came before these numbers were taken: ADR 0007, the order of one record's writes)…
    expect(term).toMatch(
      /\.do\(\(var_\d+\) => r\.object\(r\.args\(r\.db\("app"\)\.table\("messages"\)\.getAll\(r\.args\(var_\d+\.map\(\(var_\d+\) => var_\d+\("record"\)\("id"\)\)\.distinct\(\)\)\)/
    )
    expect(term).toMatch(
      /\.default\(null\)\.ne\(var_\d+\("record"\)\)\.branch\(var_\d+\.merge\(\{ superseded: true \}\), var_\d+\)/
    )
    // …and inserts the events as one row under the first number, with the default (hard) durability…
    expect(term).toMatch(
      /table\("plumage_events"\)\.insert\(\{ id: var_\d+\.sub\(var_\d+\)\.add\(1\), ts: r\.now\(\)[^}]*, events: var_\d+ \}\)\)\)\.do/
    )
    // …a number taken twice fails the query instead of losing an event, and the answer is the write's own.
    expect(term).toContain('("errors").eq(0).branch(')
    expect(term.startsWith('r.db("app").table("messages").insert(')).toBe(true)
    expect(term.endsWith('.do(() => var_1))))')).toBe(true)
  })
})
