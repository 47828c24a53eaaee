import type { TokenPayload } from '../../domain/auth/token-service.js'
import { NotAuthenticated, NotFound } from '../../domain/errors/errors.js'
import type { AuthenticationRequest, Data, Id } from '../../domain/service/service.js'
import type { AuthenticationService } from './authentication-service.js'
import type { AuthenticationResult, AuthenticationStrategy } from './authentication-strategy.js'
import { declaredIdField } from '../id-field.js'

export interface JwtStrategyOptions {
  name?: string
  entity?: string | null
  service?: string
  /**
   * How long (ms) a loaded entity is reused for later calls with a token of the same entity.
   * Trade-off: a change to the entity made where this process cannot see it (another process, the
   * database directly) is noticed only after this time; changes through this app's service evict the
   * entry at once. Default 1000 (a deleted entity or changed password is seen within 1 s everywhere;
   * with sessions the revocation that goes with them is too). 0 turns the cache off.
   */
  entityCacheTtl?: number
  /** Most entities kept; the oldest entry goes first. */
  entityCacheSize?: number
}

interface CacheEntry {
  entity: Promise<Data>
  expires: number
}

/**
 * Authenticates with an access token (REST `Authorization` header → `params.authentication`, or
 * `{ strategy: 'jwt', accessToken }` in a body) and loads its entity. This runs on every
 * authenticated call, hence the short-lived entity cache.
 */
export class JwtStrategy implements AuthenticationStrategy {
  readonly name: string
  readonly entity: string | null
  readonly service: string
  private readonly ttl: number
  private readonly maxEntries: number
  private readonly cache = new Map<string, CacheEntry>()
  private auth?: AuthenticationService

  constructor(options: JwtStrategyOptions = {}) {
    this.name = options.name ?? 'jwt'
    this.entity = options.entity === undefined ? 'user' : options.entity
    this.service = options.service ?? 'users'
    this.ttl = options.entityCacheTtl ?? 1000
    this.maxEntries = options.entityCacheSize ?? 1000
  }

  setup(auth: AuthenticationService): void {
    this.auth = auth
    if (this.entity === null) return
    const service = auth.application.service(this.service)
    const id = declaredIdField(service) ?? 'id'
    const evict = (record: unknown) => {
      if (typeof record === 'object' && record !== null) this.cache.delete(String((record as Data)[id]))
    }
    for (const event of ['updated', 'patched', 'removed']) service.on(event, evict)
  }

  async authenticate(data: AuthenticationRequest): Promise<AuthenticationResult> {
    const { accessToken } = data
    if (typeof accessToken !== 'string' || accessToken === '') throw new NotAuthenticated('No access token')
    const auth = this.setUp()
    const payload = await auth.tokens.verify(accessToken)
    // Revoked sessions and tokens (logout, reuse, password change) are refused; usually no await.
    const revocation = auth.sessions?.check(payload)
    if (revocation) await revocation
    const result: AuthenticationResult = { accessToken, authentication: { strategy: this.name, accessToken, payload } }
    if (this.entity === null) return result
    result[this.entity] = await this.getEntity(this.entityId(payload))
    return result
  }

  /** The entity id: the v3 `<entity>Id` claim keeps the stored type; `sub` is its string form (v5). */
  private entityId(payload: TokenPayload): Id {
    const claim = payload[`${this.entity}Id`]
    if (typeof claim === 'string' || typeof claim === 'number') return claim
    if (typeof payload.sub === 'string' && payload.sub !== '' && payload.sub !== 'anonymous') return payload.sub
    throw new NotAuthenticated(`The access token names no ${this.entity} (no 'sub' claim)`)
  }

  private async getEntity(id: Id): Promise<Data> {
    const key = String(id)
    const now = this.setUp().clock.now()
    let cached = this.cache.get(key)
    if (!cached || cached.expires <= now) {
      // One fetch, shared by every call that waits for it; an eviction (the entity changed) drops it.
      const entry = (cached = { entity: this.fetch(id), expires: now + this.ttl })
      entry.entity.catch(() => this.cache.get(key) === entry && this.cache.delete(key))
      if (this.ttl > 0) {
        this.cache.delete(key)
        if (this.cache.size >= this.maxEntries) this.cache.delete(this.cache.keys().next().value!)
        this.cache.set(key, entry)
      }
    }
    return { ...(await cached.entity) }
  }

  private async fetch(id: Id): Promise<Data> {
    try {
      return (await this.setUp().application.service(this.service).get(id)) as Data
    } catch (error) {
      // A valid token whose entity is gone is an authentication failure, not a missing page (docs/wire-protocol.md,
      // Failures).
      if (error instanceof NotFound)
        throw new NotAuthenticated(`The ${this.entity} of this access token no longer exists`)
      throw error
    }
  }

  private setUp(): AuthenticationService {
    if (!this.auth)
      throw new Error(
        `The '${this.name}' strategy is not set up: register it on the authentication service and call app.setup()`
      )
    return this.auth
  }
}
