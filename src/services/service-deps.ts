import type { Clock } from '../domain/clock.js'
import type { StoreFactory } from '../domain/store/store-factory.js'
import type { UniqueKeys } from '../domain/unique-keys.js'

/**
 * What createReferenceApp hands every service's `use*` function (src/services/index.ts). A service takes the
 * parts it needs: its options type is a subset of this one.
 */
export interface ServiceDeps {
  /** Opens the service's collection on whichever store the composition root bound. */
  stores: StoreFactory
  /** Stamps createdAt/updatedAt. */
  clock: Clock
  /** Where unique values are claimed; shared by every process of one database. */
  uniqueKeys: UniqueKeys
  /** Whether the app has an authentication service: without it (transport tests) nothing needs a login. */
  authentication: boolean
}
