import { BadRequest, MethodNotAllowed, NotFound } from '../../domain/errors/errors.js'
import type { Connection, Params, Query } from '../../domain/service/service.js'
import type { SocketEventHandler } from '../realtime/realtime-transport.js'

/** What the socket events need of live queries (src/application/live, given by the module's wiring). */
export interface LiveQueriesPort {
  watch(request: {
    connection: Connection
    path: string
    query: unknown
    options: unknown
    find(query: Query): Promise<unknown>
    send(frame: unknown): void
    answer(result: unknown): void
  }): Promise<void>
  unwatch(connection: Connection, id: unknown): unknown
  fence(connection: Connection, offset: string): Promise<unknown>
}

/** The longest offset a fence takes (offsets are short: an epoch and a few base-36 numbers). */
const MAX_OFFSET = 200

/**
 * The socket events of live queries (docs/wire-protocol.md, Live queries): `watch` (path, query, options, ack),
 * answered with the initial result once the watch is live and followed by `live` frames; `unwatch` (id, ack); and
 * `fence` (offset, ack) of read your writes.
 */
export function liveSocketEvents(live: LiveQueriesPort): Record<string, SocketEventHandler> {
  return {
    watch: async ({ connection, args, gateway, answer, send }) => {
      const [path, query, options] = args
      if (typeof path !== 'string') throw new NotFound('Invalid service path')
      const target = gateway.resolve(path)
      if (!target) throw new NotFound(`Service '${path}' not found`)
      if (!target.methods.includes('find')) throw new MethodNotAllowed(`Method 'find' not allowed on service '${path}'`)
      if (Object.keys(target.route).length > 0)
        throw new BadRequest(`Live queries of a nested route ('${target.path}') are not supported`)
      const find = async (rawQuery: Query) => {
        const params: Params = { ...gateway.connectionParams(connection, { ...rawQuery }), paginate: false }
        return (await gateway.call({ path: target.path, method: 'find', params })).result
      }
      await live.watch({
        connection,
        path: target.path,
        query,
        options,
        find,
        send: (frame) => send('live', frame),
        answer: (result) => answer(null, result)
      })
    },
    unwatch: async ({ connection, args, answer }) => answer(null, live.unwatch(connection, args[0])),
    // Read your writes (docs/wire-protocol.md): answered once every event up to the offset was sent to this
    // connection and its live queries applied them; the frames go before the answer on the socket.
    fence: async ({ connection, args, answer }) => {
      const offset = args[0]
      if (typeof offset !== 'string' || offset.length === 0 || offset.length > MAX_OFFSET)
        throw new BadRequest('fence needs the offset of a write (a string)')
      answer(null, await live.fence(connection, offset))
    }
  }
}
