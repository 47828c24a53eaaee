import type { PasswordHasher } from '../../domain/auth/password-hasher.js'
import { NotAuthenticated } from '../../domain/errors/errors.js'
import type { Data, Paginated, Params } from '../../domain/service/service.js'
import type { App } from '../app.js'
import type { ServiceHandle } from '../hook-context.js'
import { declaredIdField } from '../id-field.js'

export interface VerifierOptions {
  entity: string
  service: string
  usernameField: string
  passwordField: string
  hasher: PasswordHasher
  [option: string]: unknown
}

/** What the local strategy hands to `verify` as `req` (when `passReqToCallback` is true). */
export interface VerifyRequest {
  body: Record<string, unknown>
  query: Record<string, unknown>
  headers: Record<string, unknown>
  params: Params
}

/** The passport-style callback: `done(error)`, `done(null, false, { message })` or `done(null, entity, payload)`. */
export type VerifyDone = (error: unknown, entity?: unknown, info?: Record<string, unknown>) => void

export type VerifierClass = new (app: App, options: VerifierOptions) => Verifier

const INVALID_LOGIN = 'Invalid login'
// Compared against when no entity matched, so unknown users cost one bcrypt comparison like known ones.
const DUMMY_PASSWORD = 'plumage-timing-equaliser'

/**
 * Looks up the entity by username and checks the password (Feathers' `Verifier` class). Subclass it and
 * override any method; a custom `verify` calls `done(null, entity, payload)` and the payload goes into
 * the access token. `_normalizeResult` and `_comparePassword` reject with NotAuthenticated on a
 * wrong login (v1 rejected with `false`); `verify` turns that into `done(null, false, { message })`.
 */
export class Verifier {
  readonly service: ServiceHandle
  private dummyHash?: Promise<string>

  constructor(
    readonly app: App,
    readonly options: VerifierOptions
  ) {
    this.service = app.service(options.service)
  }

  async _comparePassword(entity: Data, password: string): Promise<Data> {
    const hash = entity[this.options.passwordField]
    const matches = await this.options.hasher.verify(password, typeof hash === 'string' ? hash : await this.dummy())
    if (!matches || typeof hash !== 'string') throw new NotAuthenticated(INVALID_LOGIN)
    return entity
  }

  async _normalizeResult(result: Data[] | Paginated<Data>): Promise<Data> {
    const entities = Array.isArray(result) ? result : result.data
    const entity = entities[0]
    if (!entity) throw new NotAuthenticated(INVALID_LOGIN)
    return entity
  }

  /** Also accepts `(username, password, done)`, the call shape of `passReqToCallback: false`. */
  verify(
    req: VerifyRequest | string,
    username: string | unknown,
    password: string | VerifyDone,
    done?: VerifyDone
  ): void {
    const [user, pass, callback] =
      typeof password === 'function'
        ? [req as string, username as string, password]
        : [username as string, password, done!]
    void this.check(user, pass).then(
      ({ entity, payload }) => callback(null, entity, payload),
      (error: unknown) =>
        error instanceof NotAuthenticated ? callback(null, false, { message: error.message }) : callback(error)
    )
  }

  private async check(username: string, password: string): Promise<{ entity: Data; payload: Data }> {
    const id = declaredIdField(this.service)
    if (id === undefined)
      throw new Error(`The '${this.options.service}' service needs an 'id' property for authentication`)
    const found = await this.service.find({ query: { [this.options.usernameField]: username, $limit: 1 } })
    let entity: Data
    try {
      entity = await this._normalizeResult(found)
    } catch (error) {
      await this.options.hasher.verify(password, await this.dummy())
      throw error
    }
    await this._comparePassword(entity, password)
    return { entity, payload: { [`${this.options.entity}Id`]: entity[id] } }
  }

  private dummy(): Promise<string> {
    return (this.dummyHash ??= this.options.hasher.hash(DUMMY_PASSWORD))
  }
}
