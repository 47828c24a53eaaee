import authClientModule from '@feathersjs/authentication-client'
import { feathers } from '@feathersjs/feathers'
import socketioClientModule from '@feathersjs/socketio-client'
import { io, type Socket } from 'socket.io-client'
import type {
  InstanceClient,
  InstanceClients,
  ReceivedMessageEvent,
  RelayedClient,
  ServerInstance
} from '../../src/testing/index.js'
import { connect, emitAck } from '../interfaces/socketio/support.js'
import { startTcpProxy } from './tcp-proxy.js'

/*
 * The clients the multi-instance contract (src/testing/instances) uses, whatever the store: the official
 * socket.io-client, straight to an instance or through a TCP proxy (test/support/tcp-proxy.ts) that plays the
 * load balancer, and the official Feathers client with its authentication client.
 */

const socketioClient = socketioClientModule.default
const authClient = authClientModule.default
type FeathersSocket = Parameters<typeof socketioClient>[0]

const MESSAGE_EVENTS = ['created', 'updated', 'patched', 'removed']

const portOf = (instance: ServerInstance) => Number(new URL(instance.url).port)

function recorded(socket: Socket, received: ReceivedMessageEvent[]): InstanceClient {
  return {
    received,
    get id() {
      return socket.id
    },
    get recovered() {
      return socket.recovered
    },
    call: (method, path, ...args) => emitAck(socket, method, path, ...args),
    close: () => void socket.disconnect()
  }
}

function record(socket: Socket): ReceivedMessageEvent[] {
  const received: ReceivedMessageEvent[] = []
  for (const event of MESSAGE_EVENTS)
    socket.on(`messages ${event}`, (data: Record<string, unknown>) => received.push({ event, data }))
  return received
}

async function login(socket: Socket, accessToken: string): Promise<void> {
  const [error] = await emitAck(socket, 'create', 'authentication', { strategy: 'jwt', accessToken }, {})
  if (error) throw new Error(`socket login failed: ${JSON.stringify(error)}`)
}

export const socketIoClients: InstanceClients = {
  async listen(url, accessToken) {
    const socket = await connect(url)
    await login(socket, accessToken)
    return recorded(socket, record(socket))
  },

  async relayed(instance, credentials) {
    const proxy = await startTcpProxy('127.0.0.1', portOf(instance))
    const socket = io(`http://127.0.0.1:${proxy.port}`, {
      transports: ['websocket'],
      forceNew: true,
      reconnectionDelay: 50,
      reconnectionDelayMax: 100
    })
    let received: ReceivedMessageEvent[] = []
    if ('accessToken' in credentials) {
      received = record(socket)
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
      await login(socket, credentials.accessToken)
    } else {
      const client = feathers()
        .configure(socketioClient(socket as unknown as FeathersSocket))
        .configure(authClient({ storage: new authClientModule.MemoryStorage() }))
      await client.authenticate({ strategy: 'local', ...credentials })
      for (const event of MESSAGE_EVENTS)
        client.service('messages').on(event, (data: Record<string, unknown>) => received.push({ event, data }))
    }
    const client: RelayedClient = {
      ...recorded(socket, received),
      get id() {
        return socket.id
      },
      get recovered() {
        return socket.recovered
      },
      disconnected: () => new Promise((resolve) => socket.once('disconnect', () => resolve())),
      connected: () => new Promise((resolve) => socket.once('connect', () => resolve())),
      cut: () => proxy.cut(),
      restore: () => proxy.restore(),
      retarget: (target) => proxy.retarget(portOf(target)),
      close() {
        socket.disconnect()
        void proxy.close()
      }
    }
    return client
  }
}
