/**
 * The map of the hexagon's ports: every interface an adapter implements, each with the `Symbol.for`
 * token of the same name the composition root (src/container.ts) binds it to. The ports live beside
 * the domain types they speak (a store's queries, a session's records); this file names them all in
 * one place, so a cloner swapping an adapter finds what to implement here. README's architecture map
 * lists the same names, and test/domain/ports.test.ts keeps the two and this file complete.
 */

// Persistence: one store per collection, and the small stores authentication keeps.
export { Store } from './store/store.js'
export { StoreFactory } from './store/store-factory.js'
export { UniqueKeys } from './unique-keys.js'
export { SessionStore } from './auth/session-store.js'
export { LoginAttempts } from './auth/login-attempts.js'

// Authentication.
export { PasswordHasher } from './auth/password-hasher.js'
export { TokenService } from './auth/token-service.js'
export { SecretTokens } from './auth/secret-tokens.js'

// Schemas.
export { SchemaValidator } from './schema/schema-validator.js'

// Real-time recovery: published events and the sessions of lost connections.
export { EventHistory } from './realtime/event-history.js'
export { ConnectionSessions } from './realtime/connection-sessions.js'

// Operations.
export { Clock } from './clock.js'
export { Logger } from './logger.js'
export { Metrics } from './metrics.js'
export { Tracer } from './tracing.js'
