/**
 * The Feathers error family. Serialised as docs/wire-protocol.md, Errors, describes:
 * `{ name, message, code, className, data?, errors }` — `errors: {}` is always present (v3 clients read it).
 */
export type ErrorData = Record<string, unknown>

export interface ErrorJson {
  name: string
  message: string
  code: number
  className: string
  data?: unknown
  errors: unknown
}

export class FeathersError extends Error {
  override readonly name: string
  readonly code: number
  readonly className: string
  readonly data?: unknown
  readonly errors: unknown

  constructor(name: string, code: number, className: string, message?: string | ErrorData, data?: unknown) {
    const fromObject = typeof message === 'object' && message !== null ? message : undefined
    const text = fromObject ? fromObject.message : message
    super(typeof text === 'string' && text.length > 0 ? text : 'Error')
    this.name = name
    this.code = code
    this.className = className
    const { errors, rest } = splitData(fromObject ?? data)
    this.errors = errors ?? {}
    if (rest !== undefined) this.data = rest
  }

  toJSON(): ErrorJson {
    const json: ErrorJson = {
      name: this.name,
      message: this.message,
      code: this.code,
      className: this.className,
      errors: this.errors
    }
    if (this.data !== undefined) {
      const { errors, ...rest } = json
      return { ...rest, data: this.data, errors }
    }
    return json
  }
}

function splitData(data: unknown): { errors?: unknown; rest?: unknown } {
  if (data === undefined || data === null) return {}
  if (typeof data !== 'object' || Array.isArray(data)) return { rest: data }
  const { message: _message, errors, ...rest } = data as ErrorData
  return { errors, rest: Object.keys(rest).length > 0 ? rest : undefined }
}

type ErrorArgs = [message?: string | ErrorData, data?: unknown]

function errorClass(name: string, code: number, className: string) {
  // A named class per error so `instanceof NotFound` works and stack traces read well.
  const Named = {
    [name]: class extends FeathersError {
      constructor(...[message, data]: ErrorArgs) {
        super(name, code, className, message, data)
      }
    }
  }[name]
  return Named as new (...args: ErrorArgs) => FeathersError
}

export const BadRequest = errorClass('BadRequest', 400, 'bad-request')
export const NotAuthenticated = errorClass('NotAuthenticated', 401, 'not-authenticated')
export const PaymentError = errorClass('PaymentError', 402, 'payment-error')
export const Forbidden = errorClass('Forbidden', 403, 'forbidden')
export const NotFound = errorClass('NotFound', 404, 'not-found')
export const MethodNotAllowed = errorClass('MethodNotAllowed', 405, 'method-not-allowed')
export const NotAcceptable = errorClass('NotAcceptable', 406, 'not-acceptable')
export const Timeout = errorClass('Timeout', 408, 'timeout')
export const Conflict = errorClass('Conflict', 409, 'conflict')
export const Gone = errorClass('Gone', 410, 'gone')
export const LengthRequired = errorClass('LengthRequired', 411, 'length-required')
export const PayloadTooLarge = errorClass('PayloadTooLarge', 413, 'payload-too-large')
export const Unprocessable = errorClass('Unprocessable', 422, 'unprocessable')
export const TooManyRequests = errorClass('TooManyRequests', 429, 'too-many-requests')
export const GeneralError = errorClass('GeneralError', 500, 'general-error')
export const NotImplemented = errorClass('NotImplemented', 501, 'not-implemented')
export const BadGateway = errorClass('BadGateway', 502, 'bad-gateway')
export const Unavailable = errorClass('Unavailable', 503, 'unavailable')

export type FeathersErrorClass = ReturnType<typeof errorClass>

/** Lookup by `name`, used by clients to rebuild errors received over the wire. */
export const errorsByName: Readonly<Record<string, FeathersErrorClass>> = {
  BadRequest,
  NotAuthenticated,
  PaymentError,
  Forbidden,
  NotFound,
  MethodNotAllowed,
  NotAcceptable,
  Timeout,
  Conflict,
  Gone,
  LengthRequired,
  PayloadTooLarge,
  Unprocessable,
  TooManyRequests,
  GeneralError,
  NotImplemented,
  BadGateway,
  Unavailable
}

const byCode = new Map<number, FeathersErrorClass>(
  Object.values(errorsByName).map((ErrorType) => [new ErrorType().code, ErrorType])
)

export function errorForCode(code: number): FeathersErrorClass | undefined {
  return byCode.get(code)
}
