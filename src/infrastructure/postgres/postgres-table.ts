import type { StoreIndex } from '../../domain/store/store-factory.js'
import { identifier } from './postgres-database.js'
import type { PostgresEventLog } from './postgres-event-log.js'
import { KEYS_SCHEMA } from './postgres-keyed-writes.js'
import { path } from './sql-compiler.js'

/**
 * The statements a store's setup runs (all `IF NOT EXISTS`, safe when instances start together): its table of
 * JSONB documents, the expression indexes declared for it, its event triggers when it has a log, and the
 * database's table of idempotency keys.
 */
export function tableSchema(tableName: string, indexes: readonly StoreIndex[], events?: PostgresEventLog): string[] {
  const table = identifier(tableName)
  const created = indexes.map(({ fields, name }) => {
    // The expressions SqlCompiler.field writes in queries, so that the planner matches them.
    const columns = fields.map((field) => `(doc${path(field)})`)
    const indexName = identifier(`${tableName}_${name ?? fields.join('_')}`)
    return `CREATE INDEX IF NOT EXISTS ${indexName} ON ${table} (${columns.join(', ')})`
  })
  return [
    `CREATE TABLE IF NOT EXISTS ${table} (key text COLLATE "C" PRIMARY KEY, doc jsonb NOT NULL)`,
    ...created,
    ...(events ? events.triggers(tableName) : []),
    ...KEYS_SCHEMA
  ]
}
