import { ContainerModule } from 'inversify'
import { LoginAttempts } from '../../domain/auth/login-attempts.js'
import { SessionStore } from '../../domain/auth/session-store.js'
import { Clock } from '../../domain/clock.js'
import { Logger } from '../../domain/logger.js'
import { ConnectionSessions } from '../../domain/realtime/connection-sessions.js'
import { EventHistory } from '../../domain/realtime/event-history.js'
import { historyRetentionMs, RecoverySettings } from '../../domain/realtime/recovery-settings.js'
import { StoreFactory } from '../../domain/store/store-factory.js'
import { Tracer } from '../../domain/tracing.js'
import { UniqueKeys } from '../../domain/unique-keys.js'
import { Config } from '../config/config.js'
import type { StoreModule } from '../config/store-module.js'
import { PostgresConnectionSessions } from './postgres-connection-sessions.js'
import { PostgresDatabase } from './postgres-database.js'
import { PostgresEventHistory } from './postgres-event-history.js'
import { PostgresLoginAttempts } from './postgres-login-attempts.js'
import { PostgresSessionStore } from './postgres-session-store.js'
import { PostgresSettings, readPostgresSettings } from './postgres-settings.js'
import { PostgresStoreFactory } from './postgres-store-factory.js'
import { PostgresUniqueKeys } from './postgres-unique-keys.js'

/**
 * `STORE=postgres`: collections, unique keys, sessions, login counters, and what connection
 * recovery needs (the event history over the event log, connection sessions) in the database that
 * POSTGRES_URL names, shared by every instance on it. The settings are read (and a bad one refused)
 * when the module is built, before anything connects. Every adapter queries through the one pool
 * of PostgresDatabase, opened at the first query.
 */
export const postgresStoreModule: StoreModule = (env) => {
  const settings = readPostgresSettings(env)
  return new ContainerModule(({ bind }) => {
    bind<PostgresSettings>(PostgresSettings).toConstantValue(settings)
    bind(PostgresDatabase)
      .toResolvedValue(
        (options: PostgresSettings, logger: Logger) =>
          new PostgresDatabase({
            url: options.url,
            poolSize: options.poolSize,
            timeoutMs: options.timeoutMs,
            logger,
            ...(options.password !== undefined ? { password: options.password } : {})
          }),
        [PostgresSettings, Logger]
      )
      .inSingletonScope()
    bind(PostgresStoreFactory)
      .toResolvedValue(
        (db: PostgresDatabase, options: PostgresSettings, tracer: Tracer | undefined) =>
          new PostgresStoreFactory(db, {
            timeoutMs: options.timeoutMs,
            ...(tracer?.enabled ? { traceparent: () => tracer.traceparent() } : {})
          }),
        [PostgresDatabase, PostgresSettings, { serviceIdentifier: Tracer, optional: true }]
      )
      .inSingletonScope()
    bind<StoreFactory>(StoreFactory)
      .toResolvedValue((factory: PostgresStoreFactory) => factory, [PostgresStoreFactory])
      .inSingletonScope()
    bind<EventHistory>(EventHistory)
      .toResolvedValue(
        (factory: PostgresStoreFactory, clock: Clock, { windowMs }: RecoverySettings) =>
          new PostgresEventHistory({
            log: factory.eventLog()!,
            clock,
            retentionMs: historyRetentionMs(windowMs),
            read: { db: factory.db, follows: (table) => factory.eventLog()!.follows(table) }
          }),
        [PostgresStoreFactory, Clock, RecoverySettings]
      )
      .inSingletonScope()
    bind<ConnectionSessions>(ConnectionSessions)
      .toResolvedValue(
        (db: PostgresDatabase, config: Config, clock: Clock, { windowMs }: RecoverySettings, logger: Logger) =>
          new PostgresConnectionSessions({
            db,
            clock,
            windowMs,
            logger,
            ...(config.authSecret !== undefined ? { secret: config.authSecret } : {})
          }),
        [PostgresDatabase, Config, Clock, RecoverySettings, Logger]
      )
      .inSingletonScope()
    bind<UniqueKeys>(UniqueKeys)
      .toResolvedValue((db: PostgresDatabase) => new PostgresUniqueKeys(db), [PostgresDatabase])
      .inSingletonScope()
    bind<SessionStore>(SessionStore)
      .toResolvedValue((db: PostgresDatabase) => new PostgresSessionStore(db), [PostgresDatabase])
      .inSingletonScope()
    bind<LoginAttempts>(LoginAttempts)
      .toResolvedValue((db: PostgresDatabase) => new PostgresLoginAttempts(db), [PostgresDatabase])
      .inSingletonScope()
  })
}
