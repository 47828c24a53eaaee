import { parameter, type Parameters } from './sql-compiler.js'

/**
 * What a write's statement tells the event triggers (see PostgresEventLog): transaction-local
 * settings, which stay set for the statements that follow it in the same transaction.
 */
export interface Told {
  /** Sets `plumage.event` to `updated` (an UPDATE is otherwise `patched`). */
  updated: boolean
  /** Sets `plumage.trace`. */
  trace?: string
  /** Names the settings in the statement's shape. */
  key: string
}

const NOTHING_TOLD: Told = { updated: false, key: '' }

/** Empties what earlier writes of a batch told the triggers, before a write that tells them less. */
export const FORGET_TOLD = "SELECT set_config('plumage.event', '', true), set_config('plumage.trace', '', true)"

/**
 * What the triggers must be told in a write's transaction, read once per write (nothing when the store
 * has no event log): its values go into the statement's, and the statement's text depends on `key`.
 */
export function toldFor(
  logged: boolean,
  traceparent: (() => string | undefined) | undefined,
  event?: 'updated' | 'patched' | 'removed'
): Told {
  if (!logged) return NOTHING_TOLD
  const trace = traceparent?.() || undefined
  const updated = event === 'updated'
  if (!trace && !updated) return NOTHING_TOLD
  return { updated, trace, key: `${updated ? 'u' : ''}${trace ? 't' : ''}` }
}

/** Pushes the settings' values onto `values`, in the order `settings` adds them to the statement's text. */
export function pushTold(values: unknown[], told: Told): unknown[] {
  if (told.updated) values.push('updated')
  if (told.trace) values.push(parameter(told.trace))
  return values
}

/**
 * The transaction-local settings the event triggers read, when a write needs any: the method's
 * event when it is `updated` (an UPDATE is `patched` unless told) and the writer's trace. A CTE the
 * statement joins, so it runs before the rows are written and the statement's triggers fire. (That
 * the store writes, and notifies itself, is said once per connection: see PostgresDatabase.)
 */
export function settings(params: Parameters, told: Told): { cte: string; from?: string } {
  const calls = [
    ...(told.updated ? [`set_config('plumage.event', ${params.add('updated', 'text')}, true)`] : []),
    ...(told.trace ? [`set_config('plumage.trace', ${params.add(told.trace, 'text')}, true)`] : [])
  ]
  if (calls.length === 0) return { cte: '' }
  return { cte: `WITH settings AS MATERIALIZED (SELECT ${calls.join(', ')}) `, from: 'settings' }
}
