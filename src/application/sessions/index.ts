/**
 * Sessions, a module (README "Sessions"): refresh tokens with rotation and reuse detection, revocation on logout,
 * password change and entity removal, and failed-login limits per account and client address. The authentication
 * service uses them through its ports (../authentication/session-ports.ts); src/modules/sessions.ts wires them in
 * when SESSIONS is on (the default). Delete this folder and that file's line in src/modules/index.ts, and access
 * tokens are stateless JWTs.
 */
export { LoginThrottle, LoginThrottleSettings } from './login-throttle.js'
export { RefreshStrategy, type RefreshStrategyOptions } from './refresh-strategy.js'
export { Sessions, SessionsSettings } from './sessions.js'
export { revokeOnEntityChanges } from './revoke-on-entity-changes.js'
