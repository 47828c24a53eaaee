import { describe, expect, it } from '@jest/globals'
import { INTERNAL_ERROR_MESSAGE, convertError, errorFromJson } from '../../../src/domain/errors/convert-error.js'
import {
  BadRequest,
  Conflict,
  FeathersError,
  GeneralError,
  NotAuthenticated,
  NotFound
} from '../../../src/domain/errors/errors.js'

describe('convertError', () => {
  it('passes framework errors through unchanged', () => {
    const error = new NotFound('No record found for id 7', { id: 7 })
    expect(convertError(error)).toBe(error)
  })

  it.each([
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'x')")],
    ['a driver error', Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:28015'), { code: 'ECONNREFUSED' })],
    ['a thrown string', 'secret detail'],
    ['undefined', undefined]
  ])('turns %s into a GeneralError that says nothing of it', (_name, thrown) => {
    const error = convertError(thrown)
    expect(error).toBeInstanceOf(GeneralError)
    expect(error.toJSON()).toEqual({
      name: 'GeneralError',
      message: INTERNAL_ERROR_MESSAGE,
      code: 500,
      className: 'general-error',
      errors: {}
    })
    expect(INTERNAL_ERROR_MESSAGE).toBe('Internal server error')
  })

  it('keeps the original as a cause for the log, out of the wire form', () => {
    const original = new TypeError('internal detail')
    const error = convertError(original)
    expect(error.cause).toBe(original)
    expect(Object.keys(error)).not.toContain('cause')
    expect(JSON.stringify(error)).not.toContain('internal detail')
  })
})

describe('errorFromJson (clients rebuilding wire errors)', () => {
  it('rebuilds a known error as its class, with message, data and errors', () => {
    const wire = new BadRequest('Invalid data', { errors: { email: 'required' }, field: 'email' }).toJSON()
    const error = errorFromJson(JSON.parse(JSON.stringify(wire)))
    expect(error).toBeInstanceOf(BadRequest)
    expect(error.message).toBe('Invalid data')
    expect(error.errors).toEqual({ email: 'required' })
    expect(error.data).toEqual({ field: 'email' })
    expect(error.toJSON()).toEqual(wire)
  })

  it('round-trips errors with and without data', () => {
    for (const original of [
      new NotAuthenticated('Not authenticated'),
      new NotAuthenticated('Session revoked', { name: 'SessionRevoked' }),
      new Conflict('taken', { errors: { email: 'taken' } })
    ]) {
      expect(errorFromJson(original.toJSON()).toJSON()).toEqual(original.toJSON())
    }
  })

  it('keeps data that is not an object (a string, an array) as it came', () => {
    for (const data of ['email', ['email', 'name']]) {
      const wire = {
        name: 'Conflict',
        message: 'taken',
        code: 409,
        className: 'conflict',
        data,
        errors: { email: 'taken' }
      }
      const error = errorFromJson(wire)
      expect(error).toBeInstanceOf(Conflict)
      expect(error.data).toEqual(data)
      expect(error.toJSON()).toEqual(wire)
    }
  })

  it('keeps the fields of an unknown error on a plain FeathersError', () => {
    const error = errorFromJson({
      name: 'Teapot',
      message: 'short and stout',
      code: 418,
      className: 'teapot',
      data: { spout: true },
      errors: { a: 1 }
    })
    expect(error).toBeInstanceOf(FeathersError)
    expect(error).not.toBeInstanceOf(GeneralError)
    expect(error.toJSON()).toEqual({
      name: 'Teapot',
      message: 'short and stout',
      code: 418,
      className: 'teapot',
      data: { spout: true },
      errors: { a: 1 }
    })
  })

  it('uses the fallback code, GeneralError and general-error for what the body does not say', () => {
    expect(errorFromJson({ name: 'Odd', message: 'm' }, 502).toJSON()).toEqual({
      name: 'Odd',
      message: 'm',
      code: 502,
      className: 'general-error',
      errors: {}
    })
    expect(errorFromJson(null).toJSON()).toEqual({
      name: 'GeneralError',
      message: 'Error',
      code: 500,
      className: 'general-error',
      errors: {}
    })
    expect(errorFromJson(undefined, 503).code).toBe(503)
  })
})
