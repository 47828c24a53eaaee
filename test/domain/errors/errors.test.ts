import { describe, expect, it } from '@jest/globals'
import {
  BadGateway,
  BadRequest,
  Conflict,
  FeathersError,
  Forbidden,
  GeneralError,
  Gone,
  LengthRequired,
  MethodNotAllowed,
  NotAcceptable,
  NotAuthenticated,
  NotFound,
  NotImplemented,
  PayloadTooLarge,
  PaymentError,
  Timeout,
  TooManyRequests,
  Unavailable,
  Unprocessable,
  errorForCode,
  errorsByName,
  type FeathersErrorClass
} from '../../../src/domain/errors/errors.js'

/** Feathers' error family as docs/wire-protocol.md, Errors, lists it: name, code, className. */
const FAMILY: [ErrorType: FeathersErrorClass, name: string, code: number, className: string][] = [
  [BadRequest, 'BadRequest', 400, 'bad-request'],
  [NotAuthenticated, 'NotAuthenticated', 401, 'not-authenticated'],
  [PaymentError, 'PaymentError', 402, 'payment-error'],
  [Forbidden, 'Forbidden', 403, 'forbidden'],
  [NotFound, 'NotFound', 404, 'not-found'],
  [MethodNotAllowed, 'MethodNotAllowed', 405, 'method-not-allowed'],
  [NotAcceptable, 'NotAcceptable', 406, 'not-acceptable'],
  [Timeout, 'Timeout', 408, 'timeout'],
  [Conflict, 'Conflict', 409, 'conflict'],
  [Gone, 'Gone', 410, 'gone'],
  [LengthRequired, 'LengthRequired', 411, 'length-required'],
  [PayloadTooLarge, 'PayloadTooLarge', 413, 'payload-too-large'],
  [Unprocessable, 'Unprocessable', 422, 'unprocessable'],
  [TooManyRequests, 'TooManyRequests', 429, 'too-many-requests'],
  [GeneralError, 'GeneralError', 500, 'general-error'],
  [NotImplemented, 'NotImplemented', 501, 'not-implemented'],
  [BadGateway, 'BadGateway', 502, 'bad-gateway'],
  [Unavailable, 'Unavailable', 503, 'unavailable']
]

describe('the error classes', () => {
  it.each(FAMILY)(
    '%p is %s, %i, %s, an Error and a FeathersError, and named for stack traces',
    (ErrorType, name, code, className) => {
      const error = new ErrorType('went wrong')
      expect(error).toBeInstanceOf(ErrorType)
      expect(error).toBeInstanceOf(FeathersError)
      expect(error).toBeInstanceOf(Error)
      expect({ name: error.name, code: error.code, className: error.className, message: error.message }).toEqual({
        name,
        code,
        className,
        message: 'went wrong'
      })
      expect(ErrorType.name).toBe(name)
      expect(error.stack).toMatch(new RegExp(`^${name}: went wrong`))
    }
  )

  it('are distinct classes: a NotFound is no BadRequest', () => {
    expect(new NotFound()).not.toBeInstanceOf(BadRequest)
    expect(new BadRequest()).not.toBeInstanceOf(NotFound)
  })

  it('say "Error" when given no message or an empty one', () => {
    expect(new NotFound().message).toBe('Error')
    expect(new NotFound('').message).toBe('Error')
    expect(new NotFound({ field: 'x' }).message).toBe('Error')
  })
})

describe('message and data', () => {
  it('takes a message and data: `errors` inside data becomes the errors, the rest the data', () => {
    const error = new BadRequest('Invalid data', { errors: { email: 'required' }, field: 'email' })
    expect(error.message).toBe('Invalid data')
    expect(error.errors).toEqual({ email: 'required' })
    expect(error.data).toEqual({ field: 'email' })
  })

  it('takes one object: its message is the message, `errors` the errors, the rest the data', () => {
    const error = new Conflict({ message: 'email already registered', errors: { email: 'taken' }, field: 'email' })
    expect(error.message).toBe('email already registered')
    expect(error.errors).toEqual({ email: 'taken' })
    expect(error.data).toEqual({ field: 'email' })
  })

  it('has no data when nothing but message and errors was given, and errors {} by default', () => {
    const error = new BadRequest({ message: 'm', errors: { a: 1 } })
    expect(error.data).toBeUndefined()
    expect(new BadRequest('m', {}).data).toBeUndefined()
    expect(new BadRequest('m').errors).toEqual({})
  })

  it('keeps data that is not a plain object as it is', () => {
    expect(new NotFound('m', 'text').data).toBe('text')
    expect(new NotFound('m', [1, 2]).data).toEqual([1, 2])
    expect(new NotFound('m', 0).data).toBe(0)
    expect(new NotFound('m', null).data).toBeUndefined()
  })
})

describe('toJSON (the wire form)', () => {
  it('is name, message, code, className and errors — errors always present, in that order', () => {
    const json = new NotFound('No record found for id 7').toJSON()
    expect(json).toEqual({
      name: 'NotFound',
      message: 'No record found for id 7',
      code: 404,
      className: 'not-found',
      errors: {}
    })
    expect(Object.keys(json)).toEqual(['name', 'message', 'code', 'className', 'errors'])
  })

  it('puts data before errors when there is data', () => {
    const json = new BadRequest('Invalid data', { errors: { email: 'required' }, field: 'email' }).toJSON()
    expect(Object.keys(json)).toEqual(['name', 'message', 'code', 'className', 'data', 'errors'])
    expect(json).toEqual({
      name: 'BadRequest',
      message: 'Invalid data',
      code: 400,
      className: 'bad-request',
      data: { field: 'email' },
      errors: { email: 'required' }
    })
  })

  it('is what JSON.stringify writes: no stack', () => {
    const text = JSON.stringify(new Forbidden('no'))
    expect(JSON.parse(text)).toEqual({
      name: 'Forbidden',
      message: 'no',
      code: 403,
      className: 'forbidden',
      errors: {}
    })
  })
})

describe('lookups', () => {
  it('errorsByName has every class of the family under its name', () => {
    expect(Object.keys(errorsByName).sort()).toEqual(FAMILY.map(([, name]) => name).sort())
    for (const [ErrorType, name] of FAMILY) expect(errorsByName[name]).toBe(ErrorType)
  })

  it('errorForCode finds the class of a status code, and nothing for codes outside the family', () => {
    for (const [ErrorType, , code] of FAMILY) expect(errorForCode(code)).toBe(ErrorType)
    expect(errorForCode(418)).toBeUndefined()
    expect(errorForCode(200)).toBeUndefined()
  })
})
