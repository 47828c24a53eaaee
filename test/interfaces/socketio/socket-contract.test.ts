import { io } from 'socket.io-client'
import { toArguments } from '../../../src/domain/service/method-layout.js'
import { socketIoTransport } from '../../../src/interfaces/socketio/socketio-transport.js'
import {
  ReceivedEvents,
  runRealtimeTransportContract,
  type RealtimeClient
} from '../../../src/testing/realtime-transport.contract.js'
import { startOnHttpServer } from '../../support/realtime-server.js'

/** A raw socket.io client for the contract: calls as `emit(method, path, ...args, ack)`, events as `<path> <event>`. */
async function connectSocketIo(url: string, headers: Record<string, string> = {}): Promise<RealtimeClient> {
  const socket = io(url, { transports: ['websocket'], reconnection: false, forceNew: true, extraHeaders: headers })
  const events = new ReceivedEvents()
  socket.onAny((name: string, data: unknown) => {
    const space = name.lastIndexOf(' ')
    if (space > 0) events.add({ path: name.slice(0, space), event: name.slice(space + 1), data })
  })
  const closed = new Promise<void>((resolve) => socket.once('disconnect', () => resolve()))
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('connect_error', (error) => {
      socket.close()
      reject(error)
    })
  })
  return {
    events,
    closed,
    call: (path, method, { id, data, query = {} } = {}) =>
      new Promise((resolve, reject) =>
        socket.emit(
          method,
          path,
          ...toArguments(method, { id, data, last: query }),
          (error: unknown, result: unknown) => (error ? reject(error) : resolve(result))
        )
      ),
    close: () => socket.disconnect()
  }
}

runRealtimeTransportContract({
  adapter: 'socket.io (src/interfaces/socketio)',
  cases: 'all',
  provider: 'socketio',
  start: startOnHttpServer(socketIoTransport, connectSocketIo)
})
