import type { Query } from '../../domain/service/service.js'

/**
 * Read your writes (docs/wire-protocol.md, Read your writes): a write whose query carries `$offset: true` (or the
 * string 'true' of a URL) is answered with the event offset of its events — a third ack argument over socket.io, the
 * `Plumage-Offset` header over REST. The member is taken out of the query before any hook sees it.
 */
export const OFFSET_QUERY = '$offset'
export const OFFSET_HEADER = 'Plumage-Offset'

const WRITES = new Set(['create', 'update', 'patch', 'remove'])

/** Whether a call asks for its write's offset; takes the member out of the query of a write. */
export function takeOffsetRequest(method: string, query: Query | undefined): boolean {
  if (query === undefined || !WRITES.has(method) || !Object.hasOwn(query, OFFSET_QUERY)) return false
  const asked = query[OFFSET_QUERY]
  delete query[OFFSET_QUERY]
  return asked === true || asked === 'true'
}
