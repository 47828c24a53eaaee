import type { App } from '../application/app.js'
import { useMessages } from './messages/messages.service.js'
import type { ServiceDeps } from './service-deps.js'
import { useUsers } from './users/users.service.js'

/**
 * The app's services, one line each: the path, and the function that registers the service (its store,
 * schemas and hooks) and returns it. createReferenceApp registers them in this order, and the app's
 * `app.service(path)` is typed from their return types (`ReferenceServices`). `npm run generate -- service
 * <name>` adds a line here; the typed-client map (src/reference-services.ts) gets its own line.
 */
export const services = {
  messages: useMessages,
  users: useUsers
} satisfies Record<string, (app: App, deps: ServiceDeps) => object>

/** The services by path, as the app types them. */
export type RegisteredServices = { [Path in keyof typeof services]: ReturnType<(typeof services)[Path]> }
