import { ContainerModule } from 'inversify'
import { LoginAttempts } from '../../domain/auth/login-attempts.js'
import { SessionStore } from '../../domain/auth/session-store.js'
import { Clock } from '../../domain/clock.js'
import { Logger } from '../../domain/logger.js'
import { Metrics } from '../../domain/metrics.js'
import { ConnectionSessions } from '../../domain/realtime/connection-sessions.js'
import { EventHistory } from '../../domain/realtime/event-history.js'
import { historyRetentionMs, RecoverySettings } from '../../domain/realtime/recovery-settings.js'
import { StoreFactory } from '../../domain/store/store-factory.js'
import { Tracer } from '../../domain/tracing.js'
import { UniqueKeys } from '../../domain/unique-keys.js'
import { Config } from '../config/config.js'
import type { StoreModule } from '../config/store-module.js'
import { InMemoryEventHistory } from '../store-commons/history/index.js'
import { RethinkDbConnectionSessions } from './rethinkdb-connection-sessions.js'
import { RethinkDbEventHistory } from './rethinkdb-event-history.js'
import { RethinkDbLoginAttempts } from './rethinkdb-login-attempts.js'
import { RethinkDbSessionStore } from './rethinkdb-session-store.js'
import { readRethinkDbSettings, RethinkDbSettings } from './rethinkdb-settings.js'
import { RethinkDbStoreFactory } from './rethinkdb-store-factory.js'
import { RethinkDbUniqueKeys } from './rethinkdb-unique-keys.js'

/**
 * `STORE=rethinkdb`: collections, unique keys, sessions, login counters and what connection recovery
 * needs (the event history over the event log, connection sessions) in the database that
 * RETHINKDB_URL names, shared by every instance on it: a client resumes on any of them. The settings are read (and a
 * bad one refused)
 * when the module is built, before anything connects.
 *
 * rethinkdb-ts keeps one connection pool, module-level, which the store factory opens when it is
 * constructed and drains on close(). The other adapters query through that pool, so each
 * depends on StoreFactory: resolving any of them opens the pool first.
 */
export const rethinkDbStoreModule: StoreModule = (env) => {
  const settings = readRethinkDbSettings(env)
  return new ContainerModule(({ bind }) => {
    bind<RethinkDbSettings>(RethinkDbSettings).toConstantValue(settings)
    bind(RethinkDbStoreFactory)
      .toResolvedValue(storeFactory, [
        RethinkDbSettings,
        Logger,
        { serviceIdentifier: Metrics, optional: true },
        { serviceIdentifier: Tracer, optional: true }
      ])
      .inSingletonScope()
    bind<StoreFactory>(StoreFactory)
      .toResolvedValue((factory: RethinkDbStoreFactory) => factory, [RethinkDbStoreFactory])
      .inSingletonScope()
    bind<EventHistory>(EventHistory)
      .toResolvedValue(
        (factory: RethinkDbStoreFactory, clock: Clock, { windowMs }: RecoverySettings) => {
          const log = factory.eventLog()
          const retentionMs = historyRetentionMs(windowMs)
          // Without the event log (no watch) there is no shared order: the history stays in this process.
          return log
            ? new RethinkDbEventHistory({ log, clock, retentionMs, read: log })
            : new InMemoryEventHistory(clock, retentionMs)
        },
        [RethinkDbStoreFactory, Clock, RecoverySettings]
      )
      .inSingletonScope()
    bind<ConnectionSessions>(ConnectionSessions)
      .toResolvedValue(
        (
          options: RethinkDbSettings,
          config: Config,
          clock: Clock,
          { windowMs }: RecoverySettings,
          logger: Logger,
          _pool: StoreFactory
        ) =>
          new RethinkDbConnectionSessions({
            db: options.db,
            ...placement(options),
            clock,
            windowMs,
            logger,
            ...(config.authSecret !== undefined ? { secret: config.authSecret } : {})
          }),
        [RethinkDbSettings, Config, Clock, RecoverySettings, Logger, StoreFactory]
      )
      .inSingletonScope()
    bind<UniqueKeys>(UniqueKeys)
      .toResolvedValue(
        (options: RethinkDbSettings, logger: Logger, _pool: StoreFactory) =>
          new RethinkDbUniqueKeys({ db: options.db, logger, ...placement(options) }),
        [RethinkDbSettings, Logger, StoreFactory]
      )
      .inSingletonScope()
    bind<SessionStore>(SessionStore)
      .toResolvedValue(
        (options: RethinkDbSettings, logger: Logger, _pool: StoreFactory) =>
          new RethinkDbSessionStore({ db: options.db, logger, ...placement(options) }),
        [RethinkDbSettings, Logger, StoreFactory]
      )
      .inSingletonScope()
    bind<LoginAttempts>(LoginAttempts)
      .toResolvedValue(
        (options: RethinkDbSettings, logger: Logger, _pool: StoreFactory) =>
          new RethinkDbLoginAttempts({ db: options.db, logger, ...placement(options) }),
        [RethinkDbSettings, Logger, StoreFactory]
      )
      .inSingletonScope()
  })
}

/** The store factory (and connection pool) the settings describe. */
function storeFactory(
  options: RethinkDbSettings,
  logger: Logger,
  metrics: Metrics | undefined,
  tracer: Tracer | undefined
): RethinkDbStoreFactory {
  return new RethinkDbStoreFactory(options.url, {
    logger,
    ...(metrics ? { metrics } : {}),
    timeoutMs: options.timeoutMs,
    directWrites: options.directWrites,
    ...(options.password !== undefined ? { password: options.password } : {}),
    ...(options.tls ? { tls: options.tls } : {}),
    ...placement(options),
    ...(tracer?.enabled ? { traceparent: () => tracer.traceparent() } : {})
  })
}

/** The replicas and shards every table of the app gets (RETHINKDB_REPLICAS/SHARDS), when set. */
function placement({ replicas, shards }: RethinkDbSettings): { replicas?: number; shards?: number } {
  return { ...(replicas !== undefined ? { replicas } : {}), ...(shards !== undefined ? { shards } : {}) }
}
