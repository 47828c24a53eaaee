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
