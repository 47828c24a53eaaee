/**
 * Connection state recovery, a module (README "Modules"): a real-time client whose connection dropped comes
 * back — on this instance or another — with its login, its channels and every event it missed, once. It plugs
 * into the app as a connection extension and a record of published events; the composition root adds it when
 * SOCKET_RECOVERY_WINDOW is above 0. Delete this folder and its line in src/modules.ts, and connections end
 * with their socket.
 */
import type { ConnectionSessions } from '../../domain/realtime/connection-sessions.js'
import type { EventHistory } from '../../domain/realtime/event-history.js'
import type { AppExtension } from '../extensions.js'
import { ConnectionRecovery } from './connection-recovery.js'

export { ConnectionRecovery, type RecoveryAccess } from './connection-recovery.js'
export { writeOffsetHooks } from './write-offsets.js'

/** The app extension of connection state recovery over an event history and connection sessions. */
export function connectionRecovery({
  history,
  sessions
}: {
  history: EventHistory
  sessions: ConnectionSessions
}): AppExtension {
  return {
    record: (event) => history.append(event),
    connections: (access) => new ConnectionRecovery({ ...access, history, sessions }),
    teardown: () => sessions.close()
  }
}
