import { FeathersError, GeneralError, errorsByName, type ErrorJson } from './errors.js'
import { isRecord } from '../objects.js'

/** The message every unexpected error carries on the wire: internals stay in the log. */
export const INTERNAL_ERROR_MESSAGE = 'Internal server error'

/**
 * Turns any thrown value into a FeathersError. Framework errors pass through; anything else
 * (a TypeError, a thrown string, a driver error) becomes a GeneralError with a generic message,
 * so no internal detail reaches a client. `cause` keeps the original for logging.
 */
export function convertError(thrown: unknown): FeathersError {
  if (thrown instanceof FeathersError) return thrown
  const error = new GeneralError(INTERNAL_ERROR_MESSAGE)
  Object.defineProperty(error, 'cause', { value: thrown, enumerable: false })
  return error
}

/** Rebuilds an error from its wire JSON (clients). Unknown names keep their fields on a plain FeathersError. */
export function errorFromJson(json: Partial<ErrorJson> | null | undefined, fallbackCode = 500): FeathersError {
  const body = json ?? {}
  const ErrorType = body.name ? errorsByName[body.name] : undefined
  const payload = { message: body.message, errors: body.errors, ...(isRecord(body.data) ? body.data : {}) }
  if (ErrorType) {
    const error = new ErrorType(payload)
    // Data that is not an object (a string, an array) is kept as it came; the constructor only spreads objects.
    if (body.data !== undefined && body.data !== null && !isRecord(body.data)) {
      Object.defineProperty(error, 'data', { value: body.data, enumerable: true })
    }
    return error
  }
  const code = typeof body.code === 'number' ? body.code : fallbackCode
  return new FeathersError(body.name ?? 'GeneralError', code, body.className ?? 'general-error', payload)
}
