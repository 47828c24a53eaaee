import type { RethinkDBError, RethinkDBErrorType } from 'rethinkdb-ts'
import { INTERNAL_ERROR_MESSAGE } from '../../domain/errors/convert-error.js'
import { BadRequest, FeathersError, GeneralError, Unavailable } from '../../domain/errors/errors.js'
import type { Logger } from '../../domain/logger.js'
import { rethinkdbDriver } from './rethinkdb-driver.js'

/** What a client sees while the database cannot be reached; it says what to do. */
export const UNAVAILABLE_MESSAGE = 'The database is unavailable, try again later'

let unavailableTypes: Set<RethinkDBErrorType> | undefined
/** The driver's error types that mean "the database cannot be reached" (built when the driver has loaded). */
function unavailableErrorTypes(): Set<RethinkDBErrorType> {
  const { RethinkDBErrorType: type } = rethinkdbDriver()
  return (unavailableTypes ??= new Set([type.POOL_FAIL, type.MASTER_POOL_FAIL, type.CONNECTION, type.TIMEOUT]))
}

const isRethinkDBError = (error: unknown): error is RethinkDBError => rethinkdbDriver().isRethinkDBError(error)

/**
 * Some outages arrive as UNKNOWN or OP_FAILED errors; their messages are stable across 2.x servers
 * ("None of the pools have an opened connection…", "The connection was closed before the query
 * could be completed", "primary replica for shard … not available", "lost contact with primary replica"
 * and "The primary replica isn't connected to a quorum of replicas" while a cluster fails over; the
 * event log re-raises a failed write's own message with `r.error`, so it arrives as a user error).
 * "Table `db.t` is ambiguous" is a table another instance created at the same moment under the same name,
 * renamed away by the startup repair (rethinkdb-tables.ts) within moments: also a wait, not a fault.
 */
const UNAVAILABLE_MESSAGES =
  /none of the pools|connection was closed|connection is closed|not available|lost contact|quorum of replicas|is ambiguous|ECONNREFUSED|ECONNRESET/i

/** The driver's own message, without the query backtrace it appends to `message`. */
export function driverMessage(error: unknown): string {
  if (error && typeof error === 'object' && 'msg' in error && typeof error.msg === 'string') return error.msg
  return error instanceof Error ? error.message : String(error)
}

export function isAlreadyExists(error: unknown): boolean {
  return isRethinkDBError(error) && /already exists/i.test(driverMessage(error))
}

/**
 * Maps anything a query threw to the domain error family. Outages become Unavailable (503) so clients
 * can retry; an invalid `$search` pattern is the caller's mistake (400); everything else is a
 * GeneralError whose detail goes to the log, never to the client.
 */
export function toStoreError(error: unknown, logger: Logger, operation: string): FeathersError {
  if (error instanceof FeathersError) return error
  const message = driverMessage(error)
  if (isRethinkDBError(error)) {
    if (unavailableErrorTypes().has(error.type) || UNAVAILABLE_MESSAGES.test(message)) {
      logger.warn('RethinkDB unavailable', { operation, error: message })
      return new Unavailable(UNAVAILABLE_MESSAGE)
    }
    if (error.type === rethinkdbDriver().RethinkDBErrorType.QUERY_LOGIC && /^Error in regexp/i.test(message)) {
      return new BadRequest(`Invalid $search pattern: ${message}`)
    }
  }
  logger.error('RethinkDB query failed', { operation, error: error instanceof Error ? error.message : message })
  const general = new GeneralError(INTERNAL_ERROR_MESSAGE)
  Object.defineProperty(general, 'cause', { value: error, enumerable: false })
  return general
}

/**
 * Runs a query once `ready` (the adapter's table setup) has settled, and maps whatever it throws to
 * the domain errors: the shared shape of the small RethinkDB port adapters (sessions, attempts…).
 */
export async function runQuery<T>(
  ready: () => Promise<void>,
  logger: Logger,
  operation: string,
  query: () => Promise<T>
): Promise<T> {
  await ready()
  try {
    return await query()
  } catch (error) {
    throw toStoreError(error, logger, operation)
  }
}
