import type { App } from '../../application/app.js'
import { BadRequest, MethodNotAllowed, NotFound } from '../../domain/errors/errors.js'
import type { Connection, Params, Query } from '../../domain/service/service.js'

/** Where `params.query` sits among the arguments after the path (docs/wire-protocol.md, Method calls); 1 for the rest. */
const QUERY_POSITION: Readonly<Record<string, number>> = { find: 0, update: 2, patch: 2 }
const WITH_ID = new Set(['get', 'update', 'patch', 'remove'])

/** The params every socket call runs with: the connection's members (provider, headers, auth) spread in. */
export function socketParams(connection: Connection, query: Query = {}, route: Record<string, string> = {}): Params {
  return { query, route, connection, ...connection }
}

/**
 * Runs `emit(method, path, ...args)` from a socket through the app and resolves with what the caller
 * receives. Every malformed frame becomes a framework error here, never an exception elsewhere.
 */
export async function dispatchCall(app: App, connection: Connection, method: unknown, path: unknown, args: unknown[]): Promise<unknown> {
  if (typeof path !== 'string') throw new NotFound('Invalid service path')
  const found = app.lookup(path, false)
  if (!found) throw new NotFound(`Service '${path}' not found`)
  if (typeof method !== 'string' || !found.entry.methods.includes(method)) {
    throw new MethodNotAllowed(`Method '${String(method)}' not allowed on service '${path}'`)
  }
  const position = QUERY_POSITION[method] ?? 1
  if (args.length > position + 1) throw new BadRequest(`Too many arguments for '${method}' method`)
  const query = args[position] ?? {}
  if (typeof query !== 'object' || Array.isArray(query)) {
    throw new BadRequest(`The query of '${method}' must be an object (got ${Array.isArray(query) ? 'an array' : typeof query})`)
  }
  const hasId = WITH_ID.has(method)
  const id = hasId ? args[0] : undefined
  if (id !== undefined && id !== null && typeof id !== 'string' && typeof id !== 'number') {
    throw new BadRequest(`The id of '${method}' must be a string or a number (got ${Array.isArray(id) ? 'an array' : typeof id})`)
  }
  const data = position === 2 ? args[1] : hasId || method === 'find' ? undefined : args[0]
  const context = await app.execute(found.entry, method, id, data, socketParams(connection, { ...query }, found.route))
  return context.dispatch ?? context.result
}
