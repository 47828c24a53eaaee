import { createRequire } from 'node:module'
import type PgModule from 'pg'

let driver: typeof PgModule | undefined

/**
 * node-postgres (CommonJS) loaded at first use: the composition root imports this adapter whatever
 * STORE says, and a process on another store should not pay for the driver.
 */
export function pgDriver(): typeof PgModule {
  return (driver ??= createRequire(import.meta.url)('pg') as typeof PgModule)
}
