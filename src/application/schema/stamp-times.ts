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
  return async (context) => {
    const now = new Date(clock.now()).toISOString()
    const internal = context.params.provider === undefined
    const { method } = context
    if (method === 'create') {
      const stamp = (item: unknown) => {
        const record = item as Data
        return {
          ...record,
          [createdAt]: internal && record[createdAt] !== undefined ? record[createdAt] : now,
          [updatedAt]: now
        }
      }
      context.data = Array.isArray(context.data) ? context.data.map(stamp) : stamp(context.data)
    } else if (method === 'update') {
      const current =
        context.id === null || context.id === undefined || !context.service.get
          ? undefined
          : ((await context.service.get(context.id as Id).catch(() => undefined)) as Data | undefined)
      const kept = current?.[createdAt] ?? now
      context.data = {
        ...(context.data as Data),
        [createdAt]:
          internal && (context.data as Data)[createdAt] !== undefined ? (context.data as Data)[createdAt] : kept,
        [updatedAt]: now
      }
    } else if (method === 'patch') {
      context.data = { ...(context.data as Data), [updatedAt]: now }
    }
  }
}
