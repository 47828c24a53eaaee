import { describe, expect, it } from '@jest/globals'
import {
  RESERVED_METHODS,
  STANDARD_EVENTS,
  STANDARD_METHODS,
  fromArguments,
  isStandardMethod,
  layoutOf,
  toArguments
} from '../../../src/domain/service/method-layout.js'

const params = { query: { read: false } }
const data = { text: 'hi' }

/** Each method's positional arguments for id 7, `data` and `params` (the table in method-layout.ts). */
const TABLE: [method: string, args: unknown[]][] = [
  ['find', [params]],
  ['get', [7, params]],
  ['create', [data, params]],
  ['update', [7, data, params]],
  ['patch', [7, data, params]],
  ['remove', [7, params]],
  ['shout', [data, params]]
]

describe('layoutOf', () => {
  it('says where id and data sit and which event each standard method emits', () => {
    expect(Object.fromEntries(STANDARD_METHODS.map((method) => [method, layoutOf(method)]))).toEqual({
      find: { id: false, data: false },
      get: { id: true, data: false },
      create: { id: false, data: true, event: 'created' },
      update: { id: true, data: true, event: 'updated' },
      patch: { id: true, data: true, event: 'patched' },
      remove: { id: true, data: false, event: 'removed' }
    })
  })

  it('lays custom methods out as (data, params), without an event', () => {
    expect(layoutOf('shout')).toEqual({ id: false, data: true })
  })

  it('does not mistake members of Object.prototype for methods', () => {
    for (const name of ['toString', 'constructor', 'hasOwnProperty', '__proto__'])
      expect(layoutOf(name)).toEqual({ id: false, data: true })
  })

  it('lists the standard methods and their events', () => {
    expect(STANDARD_METHODS).toEqual(['find', 'get', 'create', 'update', 'patch', 'remove'])
    expect(STANDARD_EVENTS).toEqual(['created', 'updated', 'patched', 'removed'])
    expect(STANDARD_METHODS.every(isStandardMethod)).toBe(true)
    expect(isStandardMethod('shout')).toBe(false)
    expect(isStandardMethod('toString')).toBe(false)
  })

  it('reserves the names a handle or the app uses for itself', () => {
    for (const name of ['setup', 'teardown', 'hooks', 'on', 'emit', 'publish', 'constructor'])
      expect(RESERVED_METHODS.has(name)).toBe(true)
    for (const name of [...STANDARD_METHODS, 'shout']) expect(RESERVED_METHODS.has(name)).toBe(false)
  })
})

describe('toArguments', () => {
  it.each(TABLE)('%s: lays id, data and the last argument out in order', (method, args) => {
    expect(toArguments(method, { id: 7, data, last: params })).toEqual(args)
  })

  it('leaves out what the method does not take, and keeps undefined in the places it does', () => {
    expect(toArguments('find', { id: 7, data, last: params })).toEqual([params])
    expect(toArguments('remove', { data, last: params })).toEqual([undefined, params])
    expect(toArguments('patch', { id: null, last: undefined })).toEqual([null, undefined, undefined])
  })
})

describe('fromArguments', () => {
  it.each(TABLE)('%s: reads id, data and the last argument back, with nothing extra', (method, args) => {
    const layout = layoutOf(method)
    expect(fromArguments(method, args)).toEqual({
      id: layout.id ? 7 : undefined,
      data: layout.data ? data : undefined,
      last: params,
      extra: 0
    })
  })

  it('counts the arguments beyond the last one', () => {
    expect(fromArguments('find', [params, 'x', 'y']).extra).toBe(2)
    expect(fromArguments('get', [7, params, 'x'])).toEqual({ id: 7, data: undefined, last: params, extra: 1 })
    expect(fromArguments('update', [7, data, params, 'x'])).toMatchObject({ last: params, extra: 1 })
    expect(fromArguments('shout', [data, params, 'x', 'y', 'z'])).toMatchObject({ data, last: params, extra: 3 })
  })

  it('leaves missing arguments undefined and never counts below zero', () => {
    expect(fromArguments('update', [7])).toEqual({ id: 7, data: undefined, last: undefined, extra: 0 })
    expect(fromArguments('find', [])).toEqual({ id: undefined, data: undefined, last: undefined, extra: 0 })
  })

  it('is the inverse of toArguments', () => {
    for (const [method] of TABLE) {
      const { extra, ...parts } = fromArguments(method, toArguments(method, { id: 'a', data: [1], last: 'q' }))
      expect(extra).toBe(0)
      const layout = layoutOf(method)
      expect(parts).toEqual({ id: layout.id ? 'a' : undefined, data: layout.data ? [1] : undefined, last: 'q' })
    }
  })
})
