import type { RegisteredModule } from './module.js'

export type { ModuleContext, PlumageModule, RegisteredModule } from './module.js'

/**
 * The optional modules, one line each: the setting that turns it on, and its wiring file, loaded with `import()`
 * only then. Deleting a module is deleting its folders, its wiring file and its line here (README "Modules");
 * nothing else names it. The core — memory store, express, socket.io, local and JWT authentication — is not here.
 * Modules plug in in this order: rules first, so that their hooks come before any other module's.
 */
export const modules: Readonly<Record<string, RegisteredModule>> = {
  rules: { on: () => true, load: () => import('./rules.js') },
  rethinkdb: { store: 'rethinkdb', on: (config) => config.store === 'rethinkdb', load: () => import('./rethinkdb.js') },
  postgres: { store: 'postgres', on: (config) => config.store === 'postgres', load: () => import('./postgres.js') },
  fastify: { http: 'fastify', on: (config) => config.http === 'fastify', load: () => import('./fastify.js') },
  metrics: { on: (config) => config.metrics, load: () => import('./metrics.js') },
  tracing: { on: (config) => config.tracing, load: () => import('./tracing.js') },
  recovery: { on: (config) => config.socketRecoveryWindowMs > 0, load: () => import('./recovery.js') },
  sessions: { on: (config) => config.sessions, load: () => import('./sessions.js') },
  apiDocs: { on: (config) => config.apiDocs, load: () => import('./api-docs.js') },
  liveQueries: { on: (config) => config.liveQueries, load: () => import('./live-queries.js') },
  idempotency: { on: (config) => config.idempotency, load: () => import('./idempotency.js') }
}
