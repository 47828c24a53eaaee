import { describe, expect, it } from '@jest/globals'
import jwt from 'jsonwebtoken'
import { NotAuthenticated } from '../../../src/domain/errors/errors.js'
import { JsonWebTokenService } from '../../../src/infrastructure/auth/json-web-token-service.js'
import { FakeClock } from '../../support/fake-clock.js'

const secret = 'a-test-secret-of-enough-length'

function service(options: Partial<ConstructorParameters<typeof JsonWebTokenService>[0]> = {}) {
  const clock = new FakeClock()
  return { clock, tokens: new JsonWebTokenService({ secret, ...options }, clock) }
}

function decodeParts(token: string) {
  const [header, payload] = token
    .split('.')
    .slice(0, 2)
    .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()) as Record<string, unknown>)
  return { header: header!, payload: payload! }
}

async function rejection(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown
  )
  expect(error).toBeInstanceOf(NotAuthenticated)
  return error as InstanceType<typeof NotAuthenticated>
}

describe('JsonWebTokenService', () => {
  it('signs v5-shaped tokens: HS256, typ access, aud, iss, sub, uuid jti, 1d lifetime from the clock', async () => {
    const { tokens, clock } = service()
    const token = await tokens.sign({ userId: 0 }, { subject: '0' })
    const { header, payload } = decodeParts(token)
    expect(header).toEqual({ alg: 'HS256', typ: 'access' })
    expect(payload).toMatchObject({ userId: 0, aud: 'https://yourdomain.com', iss: 'feathers', sub: '0' })
    expect(payload.iat).toBe(Math.floor(clock.now() / 1000))
    expect(Number(payload.exp) - Number(payload.iat)).toBe(86400)
    expect(payload.jti).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    await expect(tokens.verify(token)).resolves.toMatchObject({ sub: '0', userId: 0 })
  })

  it('uses the configured audience, issuer and lifetime', async () => {
    const { tokens } = service({ audience: 'https://example.org', issuer: 'plumage', expiresIn: '2h' })
    const { payload } = decodeParts(await tokens.sign({}))
    expect(payload).toMatchObject({ aud: 'https://example.org', iss: 'plumage' })
    expect(Number(payload.exp) - Number(payload.iat)).toBe(7200)
  })

  it('ignores registered claims in the payload instead of clashing with its own', async () => {
    const { tokens } = service()
    const { payload } = decodeParts(
      await tokens.sign({ aud: 'evil', iss: 'evil', exp: 1, sub: 'x', custom: true }, { subject: '7' })
    )
    expect(payload).toMatchObject({ aud: 'https://yourdomain.com', iss: 'feathers', sub: '7', custom: true })
    expect(Number(payload.exp)).toBeGreaterThan(1)
  })

  it('refuses an expired token once the clock passes exp', async () => {
    const { tokens, clock } = service({ expiresIn: '1h' })
    const token = await tokens.sign({})
    clock.advance(3600 * 1000 - 1000)
    await expect(tokens.verify(token)).resolves.toBeDefined()
    clock.advance(2000)
    const error = await rejection(tokens.verify(token))
    expect(error.message).toBe('jwt expired')
    expect(error.data).toEqual({ name: 'TokenExpiredError', expiredAt: expect.any(Date) })
    expect(JSON.parse(JSON.stringify(error)).data.expiredAt).toMatch(/^\d{4}-\d\d-\d\dT/)
  })

  it('refuses a tampered payload with "invalid signature"', async () => {
    const { tokens } = service()
    const [header, , signature] = (await tokens.sign({ admin: false }, { subject: '1' })).split('.')
    const forged = Buffer.from(
      JSON.stringify({ admin: true, sub: '1', aud: 'https://yourdomain.com', iss: 'feathers' })
    ).toString('base64url')
    expect((await rejection(tokens.verify(`${header}.${forged}.${signature}`))).message).toBe('invalid signature')
  })

  it('refuses a token signed with another secret', async () => {
    const other = new JsonWebTokenService({ secret: 'another-secret-of-enough-length' })
    expect((await rejection(service().tokens.verify(await other.sign({})))).message).toBe('invalid signature')
  })

  it('refuses alg none with "jwt signature is required"', async () => {
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')
    const token = `${part({ alg: 'none', typ: 'JWT' })}.${part({ sub: '0', aud: 'https://yourdomain.com', iss: 'feathers' })}.`
    expect((await rejection(service().tokens.verify(token))).message).toBe('jwt signature is required')
  })

  it('refuses an HS512 token signed with the right secret with "invalid algorithm"', async () => {
    const token = jwt.sign({ sub: '0' }, secret, {
      algorithm: 'HS512',
      audience: 'https://yourdomain.com',
      issuer: 'feathers'
    })
    expect((await rejection(service().tokens.verify(token))).message).toBe('invalid algorithm')
  })

  it('refuses a wrong or missing audience and issuer with the v5 messages', async () => {
    const { tokens } = service()
    const sign = (options: jwt.SignOptions) => jwt.sign({ sub: '0' }, secret, options)
    expect(
      (await rejection(tokens.verify(sign({ audience: 'https://else.example', issuer: 'feathers' })))).message
    ).toBe('jwt audience invalid. expected: https://yourdomain.com')
    expect((await rejection(tokens.verify(sign({ issuer: 'feathers' })))).message).toBe(
      'jwt audience invalid. expected: https://yourdomain.com'
    )
    expect(
      (await rejection(tokens.verify(sign({ audience: 'https://yourdomain.com', issuer: 'someone' })))).message
    ).toBe('jwt issuer invalid. expected: feathers')
  })

  it('refuses malformed tokens with "jwt malformed" and the error name in data', async () => {
    const error = await rejection(service().tokens.verify('Bearer'))
    expect(error.toJSON()).toEqual({
      name: 'NotAuthenticated',
      message: 'jwt malformed',
      code: 401,
      className: 'not-authenticated',
      data: { name: 'JsonWebTokenError' },
      errors: {}
    })
  })

  it('accepts a token without exp, as Feathers does', async () => {
    const token = jwt.sign({ sub: '3' }, secret, { audience: 'https://yourdomain.com', issuer: 'feathers' })
    await expect(service().tokens.verify(token)).resolves.toMatchObject({ sub: '3' })
  })

  describe('a token verified before', () => {
    it('is refused from its exp on and before its nbf, by the clock, as on its first verification', async () => {
      const { tokens, clock } = service({ expiresIn: '1h' })
      const token = await tokens.sign({})
      await expect(tokens.verify(token)).resolves.toBeDefined()
      clock.advance(3600 * 1000 - 1000)
      await expect(tokens.verify(token)).resolves.toBeDefined()
      clock.advance(1000)
      expect((await rejection(tokens.verify(token))).data).toEqual({
        name: 'TokenExpiredError',
        expiredAt: expect.any(Date)
      })
      const now = Math.floor(clock.now() / 1000)
      const later = jwt.sign({ sub: '0', nbf: now + 60 }, secret, {
        audience: 'https://yourdomain.com',
        issuer: 'feathers'
      })
      expect((await rejection(tokens.verify(later))).message).toBe('jwt not active')
      clock.advance(60_000)
      await expect(tokens.verify(later)).resolves.toMatchObject({ sub: '0' })
      clock.advance(-1000)
      expect((await rejection(tokens.verify(later))).message).toBe('jwt not active')
    })

    it('does not vouch for the same claims with another signature', async () => {
      const { tokens } = service()
      const token = await tokens.sign({ admin: false }, { subject: '1' })
      await tokens.verify(token)
      const [header, payload] = token.split('.')
      expect((await rejection(tokens.verify(`${header}.${payload}.${'A'.repeat(43)}`))).message).toBe(
        'invalid signature'
      )
    })

    it('hands out a copy: a caller changing its payload does not change what the next caller gets', async () => {
      const { tokens } = service()
      const token = await tokens.sign({ roles: ['reader'] }, { subject: '1' })
      const first = await tokens.verify(token)
      ;(first.roles as string[]).push('admin')
      first.sub = 'someone else'
      const second = await tokens.verify(token)
      expect(second).toMatchObject({ sub: '1', roles: ['reader'] })
      ;(second.roles as string[]).push('admin')
      await expect(tokens.verify(token)).resolves.toMatchObject({ sub: '1', roles: ['reader'] })
    })
  })

  it('needs a secret', () => {
    expect(() => new JsonWebTokenService({ secret: '' })).toThrow(/AUTH_SECRET/)
  })
})
