import { describe, expect, it } from '@jest/globals'
import { BadRequest, PayloadTooLarge } from '../../../src/domain/errors/errors.js'
import { byteLimit, parseFormBody, parseJsonBody } from '../../../src/interfaces/fastify/bodies.js'

describe('byteLimit (BODY_LIMIT as body-parser reads it)', () => {
  it.each([
    ['100kb', 102_400],
    ['1mb', 1_048_576],
    ['1.5KB', 1536],
    ['512', 512],
    ['10b', 10],
    [' 2 gb ', 2 * 2 ** 30]
  ])('reads %j as %d bytes', (limit, bytes) => {
    expect(byteLimit(limit)).toBe(bytes)
  })

  it('refuses what is not a size', () => {
    expect(() => byteLimit('lots')).toThrow(TypeError)
  })
})

describe('parseJsonBody', () => {
  it('reads objects and arrays, and an empty body as {}', () => {
    expect(parseJsonBody('{"a":[1,{"b":null}]}')).toEqual({ a: [1, { b: null }] })
    expect(parseJsonBody(' \n[1,2]')).toEqual([1, 2])
    expect(parseJsonBody('')).toEqual({})
  })

  it('refuses scalars with a 400 quoting the body, as body-parser does', () => {
    const error = (() => {
      try {
        parseJsonBody('"str"')
      } catch (thrown) {
        return thrown
      }
    })()
    expect(error).toBeInstanceOf(BadRequest)
    expect((error as Error).message).toMatch(/"str"/)
    expect(() => parseJsonBody('  12')).toThrow(BadRequest)
    expect(() => parseJsonBody('   ')).toThrow(BadRequest)
  })

  it("answers malformed JSON with JSON.parse's own message", () => {
    let message = ''
    try {
      JSON.parse('{bad')
    } catch (error) {
      message = (error as Error).message
    }
    expect(() => parseJsonBody('{bad')).toThrow(new BadRequest(message))
  })
})

describe('parseFormBody', () => {
  it('nests brackets with qs and keeps every value a string', () => {
    expect(parseFormBody('text=form&nested[a]=1&arr[]=x&arr[]=y')).toEqual({
      text: 'form',
      nested: { a: '1' },
      arr: ['x', 'y']
    })
    expect(parseFormBody('')).toEqual({})
  })

  it("keeps arrays of more than 20 items arrays (qs's default limit is 20)", () => {
    const body = Array.from({ length: 150 }, (_, i) => `v[${i}]=${i}`).join('&')
    expect(parseFormBody(body).v).toHaveLength(150)
  })

  it('answers more than 1000 parameters with 413 and nesting deeper than 32 with 400', () => {
    expect(() => parseFormBody(Array.from({ length: 1001 }, (_, i) => `a${i}=1`).join('&'))).toThrow(
      new PayloadTooLarge('too many parameters')
    )
    expect(parseFormBody(Array.from({ length: 1000 }, (_, i) => `a${i}=1`).join('&'))).toHaveProperty('a999', '1')
    expect(() => parseFormBody(`a${'[b]'.repeat(33)}=1`)).toThrow(new BadRequest('The input exceeded the depth'))
  })

  it('never sets a prototype', () => {
    const parsed = parseFormBody('__proto__[polluted]=1&constructor[prototype][x]=1')
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })
})
