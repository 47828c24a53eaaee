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

describe('the event log and trace context', () => {
  it('logs the writer\'s traceparent with each event, in the write\'s own query', () => {
    const log = new EventLog({ r, db: 'app', logger: silentLogger, traceparent: () => TRACEPARENT })
    expect(log.recording(insert(), 'messages', 'created').toString()).toContain(`trace: "${TRACEPARENT}"`)
  })

  it('logs no trace field when tracing is off or no span is active', () => {
    expect(new EventLog({ r, db: 'app', logger: silentLogger }).recording(insert(), 'messages', 'created').toString()).not.toContain('trace')
    expect(new EventLog({ r, db: 'app', logger: silentLogger, traceparent: () => undefined }).recording(insert(), 'messages', 'created').toString()).not.toContain('trace')
  })

  it('hands the logged traceparent on with the change', () => {
    let deliver: (event: LoggedEvent) => void = () => undefined
    const events = { subscribe: (_table: string, listener: typeof deliver) => { deliver = listener; return () => undefined } } as unknown as EventLog
    const watch = new TableWatch({ tableName: 'messages', idField: 'id', events, logger: silentLogger })
    const changes: StoreChange[] = []
    watch.subscribe((change) => changes.push(change))
    deliver({ id: 'e1', ts: 1, table: 'messages', event: 'created', record: { id: 'm1' }, trace: TRACEPARENT })
    deliver({ id: 'e2', ts: 2, table: 'messages', event: 'removed', record: { id: 'm1' } })
    expect(changes).toEqual([
      { event: 'created', record: { id: 'm1' }, trace: TRACEPARENT },
      { event: 'removed', record: { id: 'm1' } }
    ])
  })
})
