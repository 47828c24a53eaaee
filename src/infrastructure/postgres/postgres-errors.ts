import { INTERNAL_ERROR_MESSAGE } from '../../domain/errors/convert-error.js'
import { BadRequest, Conflict, FeathersError, GeneralError, Unavailable } from '../../domain/errors/errors.js'
import type { Logger } from '../../domain/logger.js'

/** What a client sees while the database cannot be reached; it says what to do. */
export const UNAVAILABLE_MESSAGE = 'The database is unavailable, try again later'

/**
 * SQLSTATE classes and codes that mean "the database is away or refuses us right now": connection
 * exceptions (08), operator intervention (57: shutdown, crash recovery, cannot connect now),
 * insufficient resources (53: too many connections) and a failed login (28).
 */
const UNAVAILABLE_STATE = /^(08|57|53|28)/
/** Socket-level failures of node-postgres, which carry no SQLSTATE. */
const UNAVAILABLE_MESSAGES =
  /ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EPIPE|EHOSTUNREACH|Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable|Connection ended/i

/**
 * Values PostgreSQL refuses where JavaScript takes them: text with a NUL character (22021, 22P05),
 * a value too large for an index (54000), JSON it cannot read (22P02, 22032). The caller's data,
 * so a 400 that says so — never a 500.
 */
const REFUSED_VALUE = /^(22021|22P05|22P02|22032|54000|2200[0-9A-Z]|22003)$/

export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined
}

/**
 * A transaction PostgreSQL rolled back whole to break a deadlock (40P01) or a serialization failure (40001): nothing
 * of it was committed, so it may run again (PostgreSQL's documentation advises it). Also seen through the GeneralError
 * `toStoreError` makes of it (its `cause`).
 */
export function isRetryable(error: unknown): boolean {
  const state = sqlState(error) ?? sqlState((error as { cause?: unknown } | null)?.cause)
  return state === '40P01' || state === '40001'
}

export function isUnavailable(error: unknown): boolean {
  const state = sqlState(error)
  if (state) return UNAVAILABLE_STATE.test(state)
  return UNAVAILABLE_MESSAGES.test(error instanceof Error ? error.message : String(error))
}

/**
 * Maps anything a query threw to the domain error family: outages become Unavailable (503) so
 * clients can retry, a taken primary key a Conflict (409), a value PostgreSQL cannot store a
 * BadRequest (400); everything else is a GeneralError whose detail goes to the log, never to the client.
 */
export function toStoreError(error: unknown, logger: Logger, operation: string): FeathersError {
  if (error instanceof FeathersError) return error
  const message = error instanceof Error ? error.message : String(error)
  const state = sqlState(error)
  if (isUnavailable(error)) {
    logger.warn('PostgreSQL unavailable', { operation, error: message, ...(state ? { code: state } : {}) })
    return new Unavailable(UNAVAILABLE_MESSAGE)
  }
  if (state === '23505') return new Conflict('A record with this id already exists')
  if (state && REFUSED_VALUE.test(state)) return new BadRequest(`Cannot store or query this value: ${message}`)
  logger.error('PostgreSQL query failed', { operation, error: message, ...(state ? { code: state } : {}) })
  const general = new GeneralError(INTERNAL_ERROR_MESSAGE)
  Object.defineProperty(general, 'cause', { value: error, enumerable: false })
  return general
}
