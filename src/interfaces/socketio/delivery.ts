import type { Server } from 'socket.io'
import type { Delivery, Gateway } from '../../application/transport/index.js'
import type { Logger } from '../../domain/logger.js'
import { offsetRefreshMs } from '../../domain/realtime/recovery-settings.js'
import { EncodedEvent } from './encoded-event.js'
import type { PendingOutput } from './pending-output.js'
import type { SocketConnections } from './socket-connections.js'
import { WriteBatch } from './write-batch.js'

/**
 * The event that hands a client an offset when no service event did (docs/wire-protocol.md, Connection state recovery).
 */
export const OFFSET_EVENT = 'plumage:offset'

/**
 * Sends every event the gateway delivers to its sockets as `<path> <event>` with the record, and
 * with recovery on (`windowMs` above 0) the event's offset after it, the offsets the gateway hands
 * out, and the head of the history to every socket now and then. Returns what stops the latter. A
 * socket that holds more unsent output than `pending` allows is disconnected instead of sent more.
 */
export function deliverEvents(
  io: Server,
  gateway: Gateway,
  connections: SocketConnections,
  { logger, windowMs, pending }: { logger: Logger; windowMs: number; pending: PendingOutput }
): () => void {
  const batch = new WriteBatch()
  gateway.onDelivery((delivery: Delivery) => {
    let event: EncodedEvent | undefined
    try {
      for (const connection of delivery.connections) {
        const socket = connections.socketOf(connection)
        if (socket === undefined || !pending.admits(socket)) continue
        // The offset goes last: socket.io clients keep the last string argument of an event as the offset to
        // resume from. Encoded once for every socket of the delivery, when the first one is found.
        event ??= new EncodedEvent(
          io,
          windowMs > 0 && delivery.offset !== undefined
            ? [`${delivery.path} ${delivery.event}`, delivery.data, delivery.offset]
            : [`${delivery.path} ${delivery.event}`, delivery.data]
        )
        batch.write(socket, event)
      }
    } catch (error) {
      logger.error('could not send an event to sockets', { path: delivery.path, event: delivery.event, error })
    }
  })
  if (windowMs === 0) return () => undefined
  gateway.onOffset((connection, offset) => connections.socketOf(connection)?.emit(OFFSET_EVENT, offset))
  // A client that receives no event keeps an old offset; the head keeps it within the history.
  const refresh = setInterval(
    () => io.except([...connections.restoring]).emit(OFFSET_EVENT, gateway.recovery.head()),
    offsetRefreshMs(windowMs)
  )
  refresh.unref()
  return () => clearInterval(refresh)
}
