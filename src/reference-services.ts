import type { SchemaTypes } from './interfaces/client/schema-types.js'
import type { messageSchemas } from './services/messages/messages.schema.js'
import type { userSchemas } from './services/users/users.schema.js'

/** The schemas themselves, e.g. to validate a form in the browser before sending it. */
export { messageSchemas, type Message } from './services/messages/messages.schema.js'
export { userSchemas, type User } from './services/users/users.schema.js'

/**
 * The reference app's services as a typed client sees them, from the schemas they are registered
 * with (src/services): `createClient<Services>()` types `client.service('messages')`. Both services
 * page `find` (their `paginate` option in *.service.ts). No code is generated: an app in this repository
 * imports this file, a front end elsewhere the package entry (`import type { Services } from 'plumage/services'`).
 */
export interface Services {
  messages: SchemaTypes<typeof messageSchemas, { paginate: true }>
  users: SchemaTypes<typeof userSchemas, { paginate: true }>
}
