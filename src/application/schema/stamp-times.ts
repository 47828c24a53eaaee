import type { Clock } from '../../domain/clock.js'
import type { Data, Id } from '../../domain/service/service.js'
import type { Hook } from '../hook-context.js'

export interface StampTimesOptions {
  createdAt?: string
  updatedAt?: string
}

/**
 * Before hook for create, update and patch: the server's clock sets `createdAt` (create) and
 * `updatedAt` (every write) as ISO 8601 strings — a client's clock cannot be trusted, and the data
 * schema refuses both from clients. An update keeps the record's `createdAt`. Internal calls may
 * set `createdAt` themselves (imports, seeding); the stamp fills it in when they do not.
 */
export function stampTimes(
  clock: Clock,
  { createdAt = 'createdAt', updatedAt = 'updatedAt' }: StampTimesOptions = {}
): Hook {
  // Not an async function: only an update (which reads the record's createdAt) returns a promise.
  return (context) => {
    const now = new Date(clock.now()).toISOString()
    const internal = context.params.provider === undefined
    const { method } = context
    const kept = (data: Data, fallback: unknown) =>
      internal && data[createdAt] !== undefined ? data[createdAt] : fallback
    if (method === 'create') {
      const stamp = (item: unknown) => ({ ...(item as Data), [createdAt]: kept(item as Data, now), [updatedAt]: now })
      context.data = Array.isArray(context.data) ? context.data.map(stamp) : stamp(context.data)
    } else if (method === 'patch') {
      context.data = { ...(context.data as Data), [updatedAt]: now }
    } else if (method === 'update') {
      const current =
        context.id === null || context.id === undefined || !context.service.get
          ? Promise.resolve(undefined)
          : (context.service.get(context.id as Id).catch(() => undefined) as Promise<Data | undefined>)
      return current.then((record) => {
        const data = context.data as Data
        context.data = { ...data, [createdAt]: kept(data, record?.[createdAt] ?? now), [updatedAt]: now }
      })
    }
  }
}
