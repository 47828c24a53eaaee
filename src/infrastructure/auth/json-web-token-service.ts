import { createSecretKey, randomUUID, type KeyObject } from 'node:crypto'
import { createRequire } from 'node:module'
import { inject, injectable } from 'inversify'
import type { Algorithm, JwtPayload, SignOptions as JwtSignOptions } from 'jsonwebtoken'
import { Clock } from '../../domain/clock.js'
import { NotAuthenticated } from '../../domain/errors/errors.js'
import type { SignOptions, TokenPayload, TokenService } from '../../domain/auth/token-service.js'

export interface JsonWebTokenSettings {
  secret: string
  /** A duration such as '1d', '12h' or a number of seconds (default 1d, as in Feathers). */
  expiresIn?: string | number
  audience?: string
  issuer?: string
  /** The one algorithm tokens are signed with and the only one verification accepts. */
  algorithm?: 'HS256' | 'HS384' | 'HS512'
}
export const JsonWebTokenSettings = Symbol.for('JsonWebTokenSettings')

/**
 * jsonwebtoken loads at the first sign or verify, not at startup: with its dependencies (semver alone is ~50
 * modules) it is ~70 CommonJS modules and several MB of idle RSS that a server nobody has logged in to does not need.
 */
let library: typeof import('jsonwebtoken') | undefined
const jwt = () => (library ??= createRequire(import.meta.url)('jsonwebtoken') as typeof import('jsonwebtoken'))

/** Claims this service sets itself; a payload carrying them (e.g. a re-signed token) must not clash. */
const REGISTERED = ['iat', 'exp', 'nbf', 'aud', 'iss', 'sub', 'jti']

/** Tokens whose signature and claims were verified, kept so a token sent again is only checked against the clock. */
const VERIFIED_TOKENS = 1000

/**
 * Access tokens with jsonwebtoken, shaped as Feathers v5 issues them (docs/wire-protocol.md, Tokens): header
 * `{alg: HS256, typ: 'access'}`, `aud`, `iss`, `exp`, a random `jti`. Verification pins the algorithm,
 * so `alg: none` and other algorithms are refused, and checks exp/aud/iss against the injected clock.
 */
@injectable()
export class JsonWebTokenService implements TokenService {
  // Verification runs on every authenticated call: the key is prepared once, not re-parsed per token.
  private readonly key: KeyObject
  private readonly algorithm: Algorithm
  private readonly audience: string
  private readonly issuer: string
  private readonly expiresIn: string | number
  private readonly clock: Clock
  /**
   * Verified tokens by their exact text (signature included), oldest first. Verifying one costs an
   * HMAC, base64 and JSON parsing on every authenticated call; a token seen again only needs its
   * time claims checked, which happens on every use. Revocation is not this service's concern
   * (Sessions checks it on every call).
   */
  private readonly verified = new Map<string, TokenPayload>()

  constructor(
    @inject(JsonWebTokenSettings) options: JsonWebTokenSettings,
    // The system's time unless a Clock is injected (adapters never import each other: no SystemClock here).
    @inject(Clock) clock: Clock = { now: () => Date.now() }
  ) {
    if (typeof options.secret !== 'string' || options.secret.length === 0) {
      throw new Error('JsonWebTokenService needs a non-empty secret (set AUTH_SECRET)')
    }
    this.key = createSecretKey(Buffer.from(options.secret, 'utf8'))
    this.algorithm = options.algorithm ?? 'HS256'
    this.audience = options.audience ?? 'https://yourdomain.com'
    this.issuer = options.issuer ?? 'feathers'
    this.expiresIn = options.expiresIn ?? '1d'
    this.clock = clock
  }

  async sign(payload: TokenPayload, options: SignOptions = {}): Promise<string> {
    const claims: Record<string, unknown> = {}
    for (const [name, value] of Object.entries(payload)) if (!REGISTERED.includes(name)) claims[name] = value
    claims.iat = Math.floor(this.clock.now() / 1000)
    const signOptions: JwtSignOptions = {
      algorithm: this.algorithm,
      header: { alg: this.algorithm, typ: 'access' },
      audience: this.audience,
      issuer: this.issuer,
      expiresIn: this.expiresIn as JwtSignOptions['expiresIn'],
      jwtid: randomUUID()
    }
    if (options.subject !== undefined) signOptions.subject = options.subject
    return jwt().sign(claims, this.key, signOptions)
  }

  async verify(token: string): Promise<TokenPayload> {
    const clockTimestamp = Math.floor(this.clock.now() / 1000)
    const known = this.verified.get(token)
    // Outside its time window, the token goes through jsonwebtoken again for its own error ('jwt expired'…).
    if (known && inTimeWindow(known, clockTimestamp)) return copy(known)
    let payload: string | JwtPayload
    try {
      payload = jwt().verify(token, this.key, {
        algorithms: [this.algorithm],
        audience: this.audience,
        issuer: this.issuer,
        clockTimestamp
      })
    } catch (error) {
      // The library's messages are the v5 wire messages (docs/wire-protocol.md, Failures): 'jwt expired', 'invalid
      // signature', …
      const { name, message, expiredAt } = error as { name: string; message: string; expiredAt?: Date }
      throw new NotAuthenticated(message, expiredAt ? { name, expiredAt } : { name })
    }
    if (typeof payload !== 'object' || payload === null) {
      throw new NotAuthenticated('jwt payload must be an object', { name: 'JsonWebTokenError' })
    }
    this.verified.delete(token)
    if (this.verified.size >= VERIFIED_TOKENS) this.verified.delete(this.verified.keys().next().value!)
    this.verified.set(token, copy(payload as TokenPayload))
    return payload as TokenPayload
  }
}

/** jsonwebtoken's own time checks: refused from `exp` on, and before `nbf`. */
function inTimeWindow(payload: TokenPayload, now: number): boolean {
  const { exp, nbf } = payload as { exp?: unknown; nbf?: unknown }
  return (typeof exp !== 'number' || now < exp) && (typeof nbf !== 'number' || now >= nbf)
}

/** Callers may change the payload they get: the kept one stays as verified. */
function copy(payload: TokenPayload): TokenPayload {
  return copyJson(payload) as TokenPayload
}

/** A deep copy of a JSON value (a token's payload is JSON): several times faster than structuredClone on a payload. */
function copyJson(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) return value.map(copyJson)
  const copied: Record<string, unknown> = {}
  for (const key of Object.keys(value)) copied[key] = copyJson((value as Record<string, unknown>)[key])
  return copied
}
