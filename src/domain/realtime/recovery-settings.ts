/** Connection state recovery's one setting (SOCKET_RECOVERY_WINDOW). */
export interface RecoverySettings {
  /** How long a lost connection may stay away and still be recovered, in ms; 0 turns recovery off. */
  windowMs: number
}
export const RecoverySettings = Symbol.for('RecoverySettings')

/**
 * How long a lost connection may go unnoticed: socket.io's ping interval and timeout (25 s + 20 s), with room to spare.
 */
const DETECTION_MS = 60_000

/**
 * How often a connected client is told the history's head when no event has carried an offset to
 * it: a quiet client's offset then never falls out of the history while it is connected.
 */
export function offsetRefreshMs(windowMs: number): number {
  return Math.max(1000, Math.floor(windowMs / 2))
}

/**
 * How long the history must keep an event: a client's last offset is at most one refresh old when
 * the connection drops, the drop may go unnoticed for DETECTION_MS, and the client may then stay
 * away for the window. Retention follows the history, not the connection's age (socket.io #5282).
 */
export function historyRetentionMs(windowMs: number): number {
  return windowMs + offsetRefreshMs(windowMs) + DETECTION_MS
}
