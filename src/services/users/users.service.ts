import { AdapterService } from '../../application/adapter-service.js'
import type { App } from '../../application/app.js'
import type { StoreFactory } from '../../domain/store/store-factory.js'
import type { UniqueKeys } from '../../domain/unique-keys.js'
import { usersHooks } from './users.hooks.js'
import { userSchemas, type User } from './users.schema.js'

export interface UsersOptions {
  stores: StoreFactory
  /** Where emails are claimed; must be shared by every process of one database. */
  uniqueKeys: UniqueKeys
  /** Whether the app has an authentication service (see users.hooks.ts). */
  authentication: boolean
}

/**
 * `users`: signup (create) is open, every other method needs a token, emails are unique
 * (case-insensitively), passwords are validated, stored hashed and never returned; who may change whom is
 * in users.rules.ts. Registered on `app` with its schemas and hooks; returns the service.
 */
export function useUsers(app: App, { stores, uniqueKeys, authentication }: UsersOptions): AdapterService<StoredUser> {
  const service = new AdapterService(stores.create<StoredUser>('users'), { paginate: { default: 10, max: 50 } })
  app.use('users', service, { schemas: userSchemas })
  app.service('users').hooks(usersHooks({ uniqueKeys, authentication }))
  return service
}

/** The stored record also holds the password hash, which `protect('password')` keeps from callers. */
export type StoredUser = User & { password?: string }
