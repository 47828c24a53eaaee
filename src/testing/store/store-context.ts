import type { StoreQuery } from '../../domain/query/ast.js'
import type { Data, Id } from '../../domain/service/service.js'
import type { Store } from '../../domain/store/store.js'

/** What the parts of the Store contract share: helpers, and the store and seeded records of the current case. */
export interface StoreContext {
  idProp: string
  /** Feathers query syntax → AST, with the adapter's extra operators allowed. */
  q(raw?: Record<string, unknown>): StoreQuery
  idOf(record: Data | null | undefined): Id
  names(records: Data[]): string[]
  nameSet(records: Data[]): string[]
  create(record: Data): Promise<Data>
  findAll(): Promise<Data[]>
  state(): { store: Store; alice: Data; bob: Data; doug: Data }
}
