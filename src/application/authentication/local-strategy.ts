import type { PasswordHasher } from '../../domain/auth/password-hasher.js'
import { NotAuthenticated } from '../../domain/errors/errors.js'
import type { AuthenticationRequest, Params } from '../../domain/service/service.js'
import type { AuthenticationService } from './authentication-service.js'
import type { AuthenticationResult, AuthenticationStrategy } from './authentication-strategy.js'
import { Verifier, type VerifierClass, type VerifyDone, type VerifyRequest } from './verifier.js'

/** The options of Feathers' local strategy, each with its default. */
export interface LocalStrategyOptions {
  name?: string
  entity?: string
  service?: string
  usernameField?: string
  passwordField?: string
  /** Whether `verify` receives the request as its first argument. */
  passReqToCallback?: boolean
  /** Server-side login sessions. Tokens are stateless JWTs here, so only `false` is supported. */
  session?: boolean
  Verifier?: VerifierClass
}

/** Username + password against the entity service, checked by a (replaceable) Verifier. */
export class LocalStrategy implements AuthenticationStrategy {
  readonly name: string
  readonly entity: string
  readonly service: string
  readonly usernameField: string
  readonly passwordField: string
  readonly passReqToCallback: boolean
  private verifier?: Verifier

  constructor(
    private readonly hasher: PasswordHasher,
    private readonly options: LocalStrategyOptions = {}
  ) {
    if (options.session) {
      throw new Error(
        'The local strategy does not support sessions (session: true): logins return stateless access tokens'
      )
    }
    this.name = options.name ?? 'local'
    this.entity = options.entity ?? 'user'
    this.service = options.service ?? 'users'
    this.usernameField = options.usernameField ?? 'email'
    this.passwordField = options.passwordField ?? 'password'
    this.passReqToCallback = options.passReqToCallback ?? true
  }

  setup(auth: AuthenticationService): void {
    const VerifierType = this.options.Verifier ?? Verifier
    this.verifier = new VerifierType(auth.application, {
      ...this.options,
      entity: this.entity,
      service: this.service,
      usernameField: this.usernameField,
      passwordField: this.passwordField,
      hasher: this.hasher
    })
  }

  /** Used by the `hashPassword` hook when no `hash` function is given. */
  hashPassword(plain: string): Promise<string> {
    return this.hasher.hash(plain)
  }

  async authenticate(data: AuthenticationRequest, params: Params): Promise<AuthenticationResult> {
    const username = data[this.usernameField]
    const password = data[this.passwordField]
    // Strings only: an object here would become a query operator ({ $ne: '' }) in the lookup.
    if (typeof username !== 'string' || username === '' || typeof password !== 'string' || password === '') {
      throw new NotAuthenticated('Invalid login')
    }
    const verifier = this.verifier
    if (!verifier)
      throw new Error(
        `The '${this.name}' strategy is not set up: register it on the authentication service and call app.setup()`
      )
    const req: VerifyRequest = { body: data, query: params.query ?? {}, headers: params.headers ?? {}, params }
    const { entity, payload } = await new Promise<{ entity: unknown; payload?: Record<string, unknown> }>(
      (resolve, reject) => {
        const done: VerifyDone = (error, entity, info) => {
          if (error) reject(error)
          else if (entity) resolve({ entity, payload: info })
          else reject(new NotAuthenticated(typeof info?.message === 'string' ? info.message : 'Invalid login'))
        }
        try {
          if (this.passReqToCallback) verifier.verify(req, username, password, done)
          else
            (verifier.verify as (username: string, password: string, done: VerifyDone) => void).call(
              verifier,
              username,
              password,
              done
            )
        } catch (error) {
          reject(error)
        }
      }
    )
    return { authentication: { strategy: this.name, payload }, [this.entity]: entity }
  }
}
