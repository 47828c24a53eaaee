/**
 * `plumage/client`: the browser-safe client (src/interfaces/client) for a front end that depends on
 * plumage — `createClient`, the REST and socket.io transports, the authentication plugin — and the
 * types of the typed client: `createClient<Services>()` with a map of ServiceTypes, which SchemaTypes
 * derives from a service's schemas. The reference app's map is `plumage/services`.
 *
 * @module plumage/client
 */
export {
  AuthenticationClient,
  authentication,
  SESSION_EXPIRED,
  type AuthenticationClientOptions
} from '../interfaces/client/authentication/authentication-client.js'
export { MemoryStorage, type TokenStorage } from '../interfaces/client/authentication/storage.js'
export {
  ClientApp,
  createClient,
  type ClientHook,
  type ClientHookContext,
  type TypedServiceAt
} from '../interfaces/client/client-app.js'
export { LiveWatch, type LiveChange } from '../interfaces/client/live-watch.js'
export { RemoteService } from '../interfaces/client/remote-service.js'
export { idempotentWrites, type IdempotentWritesOptions } from '../interfaces/client/retries/idempotent-writes.js'
export {
  FenceTimeout,
  readYourWrites,
  WriteFence,
  type ReadYourWritesOptions
} from '../interfaces/client/fence/write-fence.js'
export type {
  AxiosLike,
  FetchLike,
  JQueryLike,
  RequestLike,
  SuperagentLike
} from '../interfaces/client/rest/http-libraries.js'
export { rest, type RestOptions } from '../interfaces/client/rest/rest-client.js'
export type { SchemaTypes } from '../interfaces/client/schema-types.js'
export { socketio, type SocketLike, type SocketioOptions } from '../interfaces/client/socket/socketio-transport.js'
export type { Transport } from '../interfaces/client/transport.js'
export type {
  ClientParams,
  CustomMethodsOf,
  DataOf,
  EventsOf,
  FieldCriteria,
  FieldOperators,
  FindResult,
  PatchOf,
  QueryOf,
  ResultOf,
  ServiceTypes,
  TypedService
} from '../interfaces/client/typed-service.js'
