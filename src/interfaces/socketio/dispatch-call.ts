import { BadRequest, MethodNotAllowed, NotFound } from '../../domain/errors/errors.js'
import { fromArguments } from '../../domain/service/method-layout.js'
import type { Connection, Query } from '../../domain/service/service.js'
import type { Gateway } from '../../application/transport/index.js'

/**
 * Runs `emit(method, path, ...args)` from a socket through the gateway and resolves with what the
 * caller receives. The arguments after the path are laid out as the method's own, with the query in
 * place of params (docs/wire-protocol.md, Method calls). Every malformed frame becomes a framework
 * error here, never an exception elsewhere.
 */
export async function dispatchCall(
  gateway: Gateway,
  connection: Connection,
  method: unknown,
  path: unknown,
  args: unknown[]
): Promise<unknown> {
  if (typeof path !== 'string') throw new NotFound('Invalid service path')
  const target = gateway.resolve(path)
  if (!target) throw new NotFound(`Service '${path}' not found`)
  if (typeof method !== 'string' || !target.methods.includes(method)) {
    throw new MethodNotAllowed(`Method '${String(method)}' not allowed on service '${path}'`)
  }
  const { id, data, last, extra } = fromArguments<unknown>(method, args)
  const query = last ?? {}
  if (extra > 0) throw new BadRequest(`Too many arguments for '${method}' method`)
  if (typeof query !== 'object' || query === null || Array.isArray(query)) {
    throw new BadRequest(
      `The query of '${method}' must be an object (got ${Array.isArray(query) ? 'an array' : typeof query})`
    )
  }
  if (id !== undefined && id !== null && typeof id !== 'string' && typeof id !== 'number') {
    throw new BadRequest(
      `The id of '${method}' must be a string or a number (got ${Array.isArray(id) ? 'an array' : typeof id})`
    )
  }
  const params = gateway.connectionParams(connection, { ...(query as Query) }, target.route)
  return (await gateway.call({ path: target.path, method, id, data, params })).result
}
