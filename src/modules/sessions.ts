import type { AuthenticationService } from '../application/authentication/authentication-service.js'
import {
  LoginThrottle,
  revokeOnEntityChanges,
  LoginThrottleSettings,
  RefreshStrategy,
  Sessions,
  SessionsSettings
} from '../application/sessions/index.js'
import type { Container } from 'inversify'
import { LoginAttempts } from '../domain/auth/login-attempts.js'
import { SecretTokens } from '../domain/auth/secret-tokens.js'
import { SessionStore } from '../domain/auth/session-store.js'
import { Logger } from '../domain/logger.js'
import { CryptoSecretTokens } from '../infrastructure/auth/crypto-secret-tokens.js'
import { InMemoryLoginAttempts } from '../infrastructure/memory/in-memory-login-attempts.js'
import { InMemorySessionStore } from '../infrastructure/memory/in-memory-session-store.js'
import type { PlumageModule } from './module.js'

/**
 * SESSIONS=true (the default): refresh tokens, revocation and failed-login limits (src/application/sessions),
 * kept in the store's SessionStore and LoginAttempts (every store module binds them).
 */
export const module: PlumageModule = {
  bind(container, { config }) {
    keepInProcess(container, config.store)
    // Keyed by AUTH_SECRET: every instance derives the same next refresh token (a retried refresh, Sessions).
    container.bind<SecretTokens>(SecretTokens).toConstantValue(new CryptoSecretTokens(config.authSecret))
    container.bind<SessionsSettings>(SessionsSettings).toConstantValue({
      accessTokenTtl: config.jwtExpiresInMs,
      refreshTokenTtl: config.refreshTokenExpiresInMs,
      reuseWindow: config.refreshTokenReuseWindowMs
    })
    container.bind(Sessions).toSelf().inSingletonScope()
    container.bind<LoginThrottleSettings>(LoginThrottleSettings).toConstantValue({
      maxFailures: config.loginMaxFailures,
      addressMaxFailures: config.loginAddressMaxFailures,
      window: config.loginFailureWindowMs,
      freeFailures: config.loginFreeFailures
    })
    container.bind(LoginThrottle).toSelf().inSingletonScope()
  },
  // Deleting a user revokes their sessions; changing a password, all but the session that changed it.
  extend: (app, container) =>
    revokeOnEntityChanges(app, app.service<AuthenticationService>('authentication'), container.get(Sessions)),
  authentication: (container) => ({
    sessions: container.get(Sessions),
    throttle: container.get(LoginThrottle),
    strategies: [new RefreshStrategy()]
  })
}

/** A store module that binds no SessionStore or LoginAttempts: they are kept in this process (one instance only). */
function keepInProcess(container: Container, store: string): void {
  if (container.isBound(SessionStore) && container.isBound(LoginAttempts)) return
  if (store !== 'memory')
    container
      .get<Logger>(Logger)
      .warn(
        `No session adapter is registered for STORE=${store}: sessions and login limits are kept in this process only`
      )
  if (!container.isBound(SessionStore))
    container.bind<SessionStore>(SessionStore).to(InMemorySessionStore).inSingletonScope()
  if (!container.isBound(LoginAttempts))
    container.bind<LoginAttempts>(LoginAttempts).to(InMemoryLoginAttempts).inSingletonScope()
}
