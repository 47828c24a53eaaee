import type { ServerResponse } from 'node:http'
import type { Target } from '../../application/transport/index.js'

/*
 * The service route a response answers, for extensions that label requests with it (request metrics):
 * the engines mark service responses only when an extension asks (HttpExtension.readsServiceRoutes).
 */

// Beside the response, not on it: a property added to an express response made a new hidden class every request.
const targets = new WeakMap<ServerResponse, Target>()

/** A service answers this response (called by the engines' service handlers). */
export function markRoute(res: ServerResponse, target: Target): void {
  targets.set(res, target)
}

/** The route template of the service that answered `res` (`/messages/:id`), if one did and it was marked. */
export function serviceRoute(res: ServerResponse): string | undefined {
  const target = targets.get(res)
  return target && routeTemplate(target)
}

/** `/messages` and `/messages/:id` (`/users/:userId/posts/:id`), per registered path: one string each. */
const templates = new Map<string, [collection: string, item: string]>()

/** The route template of a call's target: the service's registered path, and `/:id` when it names a record. */
export function routeTemplate(target: Target): string {
  let pair = templates.get(target.path)
  if (!pair) templates.set(target.path, (pair = [`/${target.path}`, `/${target.path}/:id`]))
  return target.id === undefined ? pair[0] : pair[1]
}
