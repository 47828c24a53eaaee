/**
 * `plumage`: the app core for a project that depends on plumage instead of copying it — the App with
 * its hooks and channels, the AdapterService over any Store, the Feathers errors, the service and
 * store contracts, and the Ajv schema validator the App compiles `schemas` with. The stores are
 * separate entries (`plumage/memory`, `plumage/rethinkdb`, `plumage/postgres`), so that a project
 * loads only its own.
 *
 * @module plumage
 */
export { AdapterService, type AdapterParams, type AdapterServiceOptions } from '../application/adapter-service.js'
export { App, type AppOptions, type ServiceDescription, type ServiceOptions } from '../application/app.js'
export { Channel, type Publisher } from '../application/channel.js'
export type {
  AroundHook,
  Hook,
  HookApp,
  HookContext,
  HookMap,
  HookType,
  ServiceHandle
} from '../application/hook-context.js'
export { authenticate, type AuthenticateSettings } from '../application/authentication/hooks/authenticate.js'
export { forbidQueryOn } from '../application/authentication/hooks/forbid-query-on.js'
export { hashPassword, type HashPasswordOptions } from '../application/authentication/hooks/hash-password.js'
export { protect } from '../application/authentication/hooks/protect.js'
export { restrictStrategies } from '../application/authentication/hooks/restrict-strategies.js'
export { restrictToOwner, type RestrictToOwnerOptions } from '../application/authentication/hooks/restrict-to-owner.js'
export { declareStatuses } from '../application/hook-statuses.js'
export { stampTimes, type StampTimesOptions } from '../application/schema/stamp-times.js'
export { uniqueField, type UniqueFieldOptions } from '../application/schema/unique-field.js'
export { validateSchemas } from '../application/schema/validate-schemas.js'
export * from '../domain/errors/errors.js'
export type { JsonSchema, JsonSchemaObject, ServiceSchemas } from '../domain/schema/json-schema.js'
export { SchemaValidator } from '../domain/schema/schema-validator.js'
export type {
  Data,
  Id,
  NullableId,
  Paginated,
  PaginationOptions,
  Params,
  Query,
  Service,
  ServiceCall
} from '../domain/service/service.js'
export type { StoreQuery } from '../domain/query/ast.js'
export { Store, type Page, type StoreChange } from '../domain/store/store.js'
export { StoreFactory, type StoreIndex, type StoreOptions } from '../domain/store/store-factory.js'
export { AjvSchemaValidator } from '../infrastructure/schema/ajv-schema-validator.js'
