import { createRequire } from 'node:module'
import type * as RethinkDbTs from 'rethinkdb-ts'

let driver: typeof RethinkDbTs | undefined

/**
 * rethinkdb-ts (CommonJS) loaded at first use. The composition root imports this adapter whatever
 * STORE says; a process on another store should not pay the driver's startup time and ~3 MB.
 * `require` shares Node's module cache with `import`, so this is the same module-level `r` (and pool).
 */
export function rethinkdbDriver(): typeof RethinkDbTs {
  return (driver ??= createRequire(import.meta.url)('rethinkdb-ts') as typeof RethinkDbTs)
}

type ToQuery = (term: unknown) => RethinkDbTs.RDatum

let toQuery: ToQuery | undefined

/**
 * The query of a term already built (the JSON of `r.serialize`), so that a term built once can be
 * part of many queries. `r.deserialize` does the same after validating the term, but its validator
 * (rethinkdb-ts 3.0) rejects every term with a 0, false, null or '' argument; this is the driver's
 * own `toQuery`, which `r.deserialize` calls after the validation.
 */
export function reqlOf(term: unknown): RethinkDbTs.RDatum {
  toQuery ??= (createRequire(import.meta.url)('rethinkdb-ts/lib/query-builder/query-runner.js') as { toQuery: ToQuery })
    .toQuery
  return toQuery(term)
}
