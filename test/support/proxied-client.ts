import { io, type Socket } from 'socket.io-client'
import { authentication } from '../../src/interfaces/client/authentication/authentication-client.js'
import { createClient, type ClientApp } from '../../src/interfaces/client/client-app.js'
import { socketio } from '../../src/interfaces/client/socket/socketio-transport.js'
import type { TcpProxy } from './tcp-proxy.js'

/**
 * plumage's client with the authentication client, on its own socket.io connection through `proxy` (a load balancer
 * the test cuts and re-points), reconnecting as fast as a browser tab would; `timeout` bounds each call.
 */
export function proxiedClient(proxy: TcpProxy, timeout = 5000): { socket: Socket; client: ClientApp } {
  const socket = io(`http://127.0.0.1:${proxy.port}`, {
    transports: ['websocket'],
    forceNew: true,
    reconnectionDelay: 50,
    reconnectionDelayMax: 200
  })
  const client = createClient().configure(socketio(socket, { timeout })).configure(authentication())
  return { socket, client }
}
