import { connectionRecovery, writeOffsetHooks } from '../application/recovery/index.js'
import { Clock } from '../domain/clock.js'
import { Logger } from '../domain/logger.js'
import { ConnectionSessions } from '../domain/realtime/connection-sessions.js'
import { EventHistory } from '../domain/realtime/event-history.js'
import { historyRetentionMs, RecoverySettings } from '../domain/realtime/recovery-settings.js'
import { InMemoryConnectionSessions } from '../infrastructure/memory/in-memory-connection-sessions.js'
import { InMemoryEventHistory } from '../infrastructure/store-commons/history/index.js'
import type { PlumageModule } from './module.js'

/**
 * SOCKET_RECOVERY_WINDOW above 0 (the default, 120 s): a dropped socket connection resumes — on any instance
 * when the store keeps the event history and connection sessions where every instance reads them (RethinkDB,
 * PostgreSQL), on the instance it was connected to otherwise (src/application/recovery).
 */
export const module: PlumageModule = {
  bind(container, { config }) {
    container.bind<RecoverySettings>(RecoverySettings).toConstantValue({ windowMs: config.socketRecoveryWindowMs })
    if (container.isBound(EventHistory) && container.isBound(ConnectionSessions)) return
    if (config.store !== 'memory') {
      container
        .get<Logger>(Logger)
        .warn(
          `No connection recovery adapter is registered for STORE=${config.store}: a dropped socket connection resumes only on the instance it was connected to`
        )
    }
    const windowMs = config.socketRecoveryWindowMs
    if (!container.isBound(EventHistory))
      container
        .bind<EventHistory>(EventHistory)
        .toResolvedValue((clock: Clock) => new InMemoryEventHistory(clock, historyRetentionMs(windowMs)), [Clock])
        .inSingletonScope()
    if (!container.isBound(ConnectionSessions))
      container
        .bind<ConnectionSessions>(ConnectionSessions)
        .toResolvedValue((clock: Clock) => new InMemoryConnectionSessions(clock, windowMs), [Clock])
        .inSingletonScope()
  },
  extend: (app, container) => {
    const history = container.get<EventHistory>(EventHistory)
    app.extend(connectionRecovery({ history, sessions: container.get<ConnectionSessions>(ConnectionSessions) }))
    // Read your writes: a write asked with $offset is answered with its event offset.
    app.hooks(writeOffsetHooks(history, app))
  }
}
