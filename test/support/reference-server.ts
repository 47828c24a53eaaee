import { io, type Socket } from 'socket.io-client'
import { AUTH_SECRET, startAuthServer, type AuthServer } from './auth-server.js'

/**
 * The reference app as the composition root builds it (REST + socket.io + authentication) on
 * 127.0.0.1:0. bcrypt cost 4 keeps dozens of signups fast; everything else is the production wiring.
 */
export function startReferenceServer(env: Record<string, string> = {}): Promise<AuthServer> {
  return startAuthServer({ AUTH_SECRET, BCRYPT_ROUNDS: '4', ...env })
}

export interface HttpAnswer {
  status: number
  contentType: string
  text: string
  body: unknown
}

/** One JSON request; the body is parsed when the answer says it is JSON. */
export async function request(
  url: string,
  method: string,
  path: string,
  options: { body?: unknown; token?: string; headers?: Record<string, string> } = {}
): Promise<HttpAnswer> {
  const response = await fetch(url + path, {
    method,
    headers: {
      Accept: 'application/json',
      ...(options.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
      ...options.headers
    },
    body:
      options.body === undefined
        ? undefined
        : typeof options.body === 'string'
          ? options.body
          : JSON.stringify(options.body)
  })
  const text = await response.text()
  const contentType = response.headers.get('content-type') ?? ''
  return {
    status: response.status,
    contentType,
    text,
    body: contentType.includes('application/json') && text ? JSON.parse(text) : undefined
  }
}

export interface Session {
  id: number
  email: string
  token: string
}

/** Signs up over REST and logs in; returns the user id and an access token. */
export async function signup(url: string, email: string, password = 'secret-pw'): Promise<Session> {
  const created = await request(url, 'POST', '/users', { body: { email, password } })
  if (created.status !== 201) throw new Error(`signup of ${email} failed: ${created.status} ${created.text}`)
  const login = await request(url, 'POST', '/authentication', { body: { strategy: 'local', email, password } })
  if (login.status !== 201) throw new Error(`login of ${email} failed: ${login.status} ${login.text}`)
  return { id: (created.body as { id: number }).id, email, token: (login.body as { accessToken: string }).accessToken }
}

/** A connected raw socket.io client (websocket, no reconnection: a drop must show up as a failure). */
export async function connectSocket(url: string, token?: string): Promise<Socket> {
  const socket = io(url, {
    transports: ['websocket'],
    forceNew: true,
    reconnection: false,
    ...(token ? { extraHeaders: { Authorization: `Bearer ${token}` } } : {})
  })
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('connect_error', reject)
  })
  return socket
}

/**
 * Resolves once `predicate` holds, checked after every event the socket receives (once its own
 * listeners ran: catch-all ones run first).
 */
export function receivedUntil(socket: Socket, predicate: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (predicate()) return resolve()
    const check = () =>
      queueMicrotask(() => {
        if (!predicate()) return
        socket.offAny(check)
        resolve()
      })
    socket.onAny(check)
  })
}

/** `socket.emit(event, ...args, ack)` as a promise of the ack's arguments. */
export function call(socket: Socket, event: string, ...args: unknown[]): Promise<unknown[]> {
  return new Promise((resolve) => socket.emit(event, ...args, (...answer: unknown[]) => resolve(answer)))
}
