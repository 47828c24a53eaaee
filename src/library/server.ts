/**
 * `plumage/server`: what serves an app to Feathers clients — the express HTTP engine, the socket.io
 * real-time transport (started on the engine's `server`), and authentication: the `authentication`
 * service with its JWT and local strategies, the hooks that go with them (the same functions
 * `plumage` exports), and the bcrypt and jsonwebtoken adapters of the PasswordHasher and TokenService
 * ports, to construct them. The core's pieces, as src/container.ts puts them together for `npm start`;
 * fastify, a module, is its own entry (`plumage/fastify`).
 *
 * @module plumage/server
 */
export {
  AuthenticationService,
  type AuthenticationServiceOptions
} from '../application/authentication/authentication-service.js'
export type { AuthenticationStrategy } from '../application/authentication/authentication-strategy.js'
export { authenticate, type AuthenticateSettings } from '../application/authentication/hooks/authenticate.js'
export { hashPassword, type HashPasswordOptions } from '../application/authentication/hooks/hash-password.js'
export { protect } from '../application/authentication/hooks/protect.js'
export { JwtStrategy, type JwtStrategyOptions } from '../application/authentication/jwt-strategy.js'
export { LocalStrategy, type LocalStrategyOptions } from '../application/authentication/local-strategy.js'
export type { AuthenticationResult, LoginResult } from '../domain/auth/authentication-result.js'
export type { PasswordHasher } from '../domain/auth/password-hasher.js'
export type { TokenPayload, TokenService } from '../domain/auth/token-service.js'
export type { Connection } from '../domain/service/service.js'
export { BcryptPasswordHasher } from '../infrastructure/auth/bcrypt-password-hasher.js'
export { JsonWebTokenService, type JsonWebTokenSettings } from '../infrastructure/auth/json-web-token-service.js'
export type { HealthOptions } from '../interfaces/http/health.js'
export type { HttpAppOptions, HttpEngine } from '../interfaces/http/http-engine.js'
export type { RunningServer } from '../interfaces/http/http-server.js'
export type {
  RealtimeOptions,
  RealtimeTransport,
  RealtimeTransportFactory
} from '../interfaces/realtime/realtime-transport.js'
export { expressEngine, type RestAppOptions } from '../interfaces/rest/rest-app.js'
export { socketIoTransport } from '../interfaces/socketio/socketio-transport.js'
