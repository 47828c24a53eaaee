/*
 * Resolvers (Feathers v5's `@feathersjs/schema` resolvers): per-property functions that compute, change or
 * remove a record's properties, the hooks that apply them to a call's data, query, result and what leaves the
 * server, and the per-call loader that batches the gets they make (README "Resolvers").
 */
export {
  resolve,
  virtual,
  Resolver,
  type PropertyResolver,
  type PropertyResolverMap,
  type ResolverStatus,
  type VirtualResolver
} from './resolver.js'
export {
  resolveData,
  resolveExternal,
  resolveQuery,
  resolveResult,
  type MarkedResolverHook,
  type ResolverHook
} from './hooks.js'
export { loaderFor, shareLoaders, type RecordLoader } from './loader.js'
