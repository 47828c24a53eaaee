import { ContainerModule } from 'inversify'
import { LoginAttempts } from '../../domain/auth/login-attempts.js'
import { SessionStore } from '../../domain/auth/session-store.js'
import { Logger } from '../../domain/logger.js'
import { Metrics } from '../../domain/metrics.js'
import { StoreFactory } from '../../domain/store/store-factory.js'
import { Tracer } from '../../domain/tracing.js'
import { UniqueKeys } from '../../domain/unique-keys.js'
import type { StoreModule } from '../config/store-module.js'
import { RethinkDbLoginAttempts } from './rethinkdb-login-attempts.js'
import { RethinkDbSessionStore } from './rethinkdb-session-store.js'
import { readRethinkDbSettings, RethinkDbSettings } from './rethinkdb-settings.js'
import { RethinkDbStoreFactory } from './rethinkdb-store-factory.js'
import { RethinkDbUniqueKeys } from './rethinkdb-unique-keys.js'

/**
 * `STORE=rethinkdb`: collections, unique keys, sessions and login counters in the database that
 * RETHINKDB_URL names, shared by every instance on it. The settings are read (and a bad one refused)
 * when the module is built, before anything connects.
 *
 * rethinkdb-ts keeps one connection pool, module-level, which the store factory opens when it is
 * constructed and drains on close(). The other three adapters query through that pool, so each
 * depends on StoreFactory: resolving any of them opens the pool first.
 */
export const rethinkDbStoreModule: StoreModule = (env) => {
  const settings = readRethinkDbSettings(env)
  return new ContainerModule(({ bind }) => {
    bind<RethinkDbSettings>(RethinkDbSettings).toConstantValue(settings)
    bind<StoreFactory>(StoreFactory).toResolvedValue((options: RethinkDbSettings, logger: Logger, metrics: Metrics, tracer: Tracer) => new RethinkDbStoreFactory(options.url, {
      logger,
      metrics,
      timeoutMs: options.timeoutMs,
      directWrites: options.directWrites,
      ...(options.password !== undefined ? { password: options.password } : {}),
      ...(options.tls ? { tls: options.tls } : {}),
      ...(options.replicas !== undefined ? { replicas: options.replicas } : {}),
      ...(options.shards !== undefined ? { shards: options.shards } : {}),
      ...(tracer.enabled ? { traceparent: () => tracer.traceparent() } : {})
    }), [RethinkDbSettings, Logger, Metrics, Tracer]).inSingletonScope()
    bind<UniqueKeys>(UniqueKeys).toResolvedValue((options: RethinkDbSettings, logger: Logger, _pool: StoreFactory) =>
      new RethinkDbUniqueKeys({ db: options.db, logger }), [RethinkDbSettings, Logger, StoreFactory]).inSingletonScope()
    bind<SessionStore>(SessionStore).toResolvedValue((options: RethinkDbSettings, logger: Logger, _pool: StoreFactory) =>
      new RethinkDbSessionStore({ db: options.db, logger }), [RethinkDbSettings, Logger, StoreFactory]).inSingletonScope()
    bind<LoginAttempts>(LoginAttempts).toResolvedValue((options: RethinkDbSettings, logger: Logger, _pool: StoreFactory) =>
      new RethinkDbLoginAttempts({ db: options.db, logger }), [RethinkDbSettings, Logger, StoreFactory]).inSingletonScope()
  })
}
