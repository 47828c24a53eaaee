/**
 * The application's public seam for driving adapters. Transports (src/interfaces/rest, socketio,
 * fastify…) import from the application layer only through this module — lint enforces it.
 */
export type { App, ServiceDescription } from '../app.js'
export { AUTHENTICATES } from '../authentication/hooks/authenticate.js'
export type { LoginDescription } from '../authentication/authentication-service.js'
export type { Delivery } from '../channel.js'
export { UNIQUE_FIELD } from '../schema/unique-field.js'
export { declaredStatuses } from '../hook-statuses.js'
export { parseAuthorization } from './authorization-header.js'
export type { CloseReason, ConnectionExtension, Restorable } from './connection-extension.js'
export type { ServiceCall } from '../../domain/service/service.js'
export { Gateway } from './gateway.js'
export type { CallResult, Target } from './call.js'
