import { RethinkDBErrorType } from 'rethinkdb-ts'
import { RethinkDBError } from 'rethinkdb-ts/lib/error/error.js'
import { INTERNAL_ERROR_MESSAGE } from '../../../src/domain/errors/convert-error.js'
import { BadRequest, Conflict } from '../../../src/domain/errors/errors.js'
import type { Logger } from '../../../src/domain/logger.js'
import {
  isAlreadyExists,
  toStoreError,
  UNAVAILABLE_MESSAGE
} from '../../../src/infrastructure/rethinkdb/rethinkdb-errors.js'

function recordingLogger() {
  const entries: { level: string; message: string; details?: Record<string, unknown> }[] = []
  const logger: Logger = {
    debug: (message, details) => entries.push({ level: 'debug', message, details }),
    info: (message, details) => entries.push({ level: 'info', message, details }),
    warn: (message, details) => entries.push({ level: 'warn', message, details }),
    error: (message, details) => entries.push({ level: 'error', message, details })
  }
  return { logger, entries }
}

describe('toStoreError', () => {
  it.each([
    [
      'an empty pool',
      new RethinkDBError('None of the pools have an opened connection and failed to open a new one.', {
        type: RethinkDBErrorType.POOL_FAIL
      })
    ],
    [
      'a master pool failure',
      new RethinkDBError('Error initializing master pool', { type: RethinkDBErrorType.MASTER_POOL_FAIL })
    ],
    ['a dropped connection', new RethinkDBError('The connection was closed before the query could be completed.')],
    [
      'an unavailable replica',
      new RethinkDBError('Cannot perform read: primary replica for shard ["", +inf) not available', {
        type: RethinkDBErrorType.OP_FAILED
      })
    ],
    [
      "a primary cut off from its replicas, re-raised by the event log's query (cluster failover)",
      new RethinkDBError(
        "Cannot perform write: The primary replica isn't connected to a quorum of replicas. The write was not performed.",
        { type: RethinkDBErrorType.USER }
      )
    ],
    [
      'a table created twice at once by two instances, before the startup repair renamed one',
      new RethinkDBError('Table `app.users` is ambiguous; there are multiple tables with that name.', {
        type: RethinkDBErrorType.OP_FAILED
      })
    ],
    [
      'a primary lost in the middle of a write (cluster failover)',
      new RethinkDBError('Cannot perform write: lost contact with primary replica', {
        type: RethinkDBErrorType.OP_INDETERMINATE
      })
    ]
  ])('maps %s to Unavailable (503)', (_name, error) => {
    const { logger, entries } = recordingLogger()
    const mapped = toStoreError(error, logger, 'items.find')
    expect(mapped.code).toBe(503)
    expect(mapped.message).toBe(UNAVAILABLE_MESSAGE)
    expect(entries).toHaveLength(1)
    expect(entries[0]).toMatchObject({ level: 'warn', details: { operation: 'items.find' } })
  })

  it('maps an invalid $search pattern to BadRequest', () => {
    const error = new RethinkDBError('Error in regexp `(` (portion `(`): missing ): (', {
      type: RethinkDBErrorType.QUERY_LOGIC
    })
    const mapped = toStoreError(error, recordingLogger().logger, 'items.find')
    expect(mapped).toBeInstanceOf(BadRequest)
    expect(mapped.message).toBe('Invalid $search pattern: Error in regexp `(` (portion `(`): missing ): (')
  })

  it('logs any other driver error and sends only a generic GeneralError', () => {
    const { logger, entries } = recordingLogger()
    const error = new RethinkDBError('Table `plumage.items` does not exist.', { type: RethinkDBErrorType.OP_FAILED })
    const mapped = toStoreError(error, logger, 'items.get')
    expect(mapped.code).toBe(500)
    expect(mapped.message).toBe(INTERNAL_ERROR_MESSAGE)
    expect(JSON.stringify(mapped.toJSON())).not.toContain('plumage.items')
    expect(entries).toEqual([
      {
        level: 'error',
        message: 'RethinkDB query failed',
        details: { operation: 'items.get', error: expect.stringContaining('does not exist') }
      }
    ])
  })

  it('passes domain errors through untouched', () => {
    const conflict = new Conflict('taken')
    expect(toStoreError(conflict, recordingLogger().logger, 'items.create')).toBe(conflict)
  })

  it('recognises "already exists" answers to dbCreate and tableCreate', () => {
    expect(
      isAlreadyExists(new RethinkDBError('Database `plumage` already exists.', { type: RethinkDBErrorType.OP_FAILED }))
    ).toBe(true)
    expect(
      isAlreadyExists(
        new RethinkDBError('Table `plumage.items` already exists.', { type: RethinkDBErrorType.OP_FAILED })
      )
    ).toBe(true)
    expect(isAlreadyExists(new Error('already exists'))).toBe(false)
  })
})
