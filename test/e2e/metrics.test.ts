import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { io, type Socket } from 'socket.io-client'
import { allHttpEngines } from '../support/http-engines.js'
import { AUTH_SECRET, startAuthServer, type AuthServer } from '../support/auth-server.js'
import { parseExposition, samplesOf, valueOf, type Exposition } from '../support/prometheus-text.js'

/*
 * GET /metrics after known traffic, on every HTTP engine (the real composition root): REST calls
 * with a 404, a validation error and an unknown page, a socket connection with its calls and
 * events, failed and throttled logins — then the text format parsed and every count checked.
 */
const ENGINES = Object.keys(await allHttpEngines())
const user = { email: 'metrics@example.com', password: 'right-password' }

async function call(
  server: AuthServer,
  method: string,
  path: string,
  body?: unknown,
  token?: string
): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {})
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
}

async function scrape(server: AuthServer): Promise<Exposition> {
  const response = await fetch(`${server.url}/metrics`)
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
  return parseExposition(await response.text())
}

function emit(socket: Socket, ...args: unknown[]): Promise<unknown[]> {
  return new Promise((resolve) =>
    socket.emit(String(args[0]), ...args.slice(1), (...answer: unknown[]) => resolve(answer))
  )
}

describe.each(ENGINES)('GET /metrics on %s', (engine) => {
  let server: AuthServer
  let socket: Socket | undefined

  beforeAll(async () => {
    server = await startAuthServer({ AUTH_SECRET, HTTP: engine, LOGIN_MAX_FAILURES: '2' })
  })
  afterAll(async () => {
    socket?.disconnect()
    await server.close()
  })

  it('counts requests by route template, service calls, sockets, events and logins', async () => {
    expect((await call(server, 'POST', '/users', user)).status).toBe(201)
    const login = await call(server, 'POST', '/authentication', { strategy: 'local', ...user })
    expect(login.status).toBe(201)
    const { accessToken } = (await login.json()) as { accessToken: string }
    expect((await call(server, 'GET', '/messages', undefined, accessToken)).status).toBe(200)
    expect((await call(server, 'GET', '/messages?text=x', undefined, accessToken)).status).toBe(200)
    expect((await call(server, 'GET', '/messages/424242', undefined, accessToken)).status).toBe(404)
    expect((await call(server, 'POST', '/messages', { text: '' }, accessToken)).status).toBe(400)
    expect((await call(server, 'GET', '/no/such/page-737373')).status).toBe(404)

    socket = io(server.url, { transports: ['websocket'], forceNew: true, reconnection: false })
    await new Promise<void>((resolve, reject) => {
      socket!.once('connect', resolve)
      socket!.once('connect_error', reject)
    })
    const [loginError] = await emit(socket, 'create', 'authentication', { strategy: 'local', ...user }, {})
    expect(loginError).toBeNull()
    const received: unknown[] = []
    const both = new Promise<void>((resolve) =>
      socket!.on('messages created', (message) => {
        if (received.push(message) === 2) resolve()
      })
    )
    expect((await call(server, 'POST', '/messages', { text: 'over REST' }, accessToken)).status).toBe(201)
    const [createError] = await emit(socket, 'create', 'messages', { text: 'over the socket' }, {})
    expect(createError).toBeNull()
    await both

    const wrong = { strategy: 'local', email: user.email, password: 'wrong-password' }
    expect((await call(server, 'POST', '/authentication', wrong)).status).toBe(401)
    expect((await call(server, 'POST', '/authentication', wrong)).status).toBe(401)
    expect((await call(server, 'POST', '/authentication', wrong)).status).toBe(429)

    const metrics = await scrape(server)
    const requests = (method: string, route: string, status: number) =>
      valueOf(metrics, 'http_server_request_duration_seconds_count', {
        http_request_method: method,
        http_route: route,
        http_response_status_code: String(status)
      })
    expect(requests('GET', '/messages', 200)).toBe(2)
    expect(requests('GET', '/messages/:id', 404)).toBe(1)
    expect(requests('POST', '/messages', 400)).toBe(1)
    expect(requests('POST', '/messages', 201)).toBe(1)
    expect(requests('POST', '/users', 201)).toBe(1)
    expect(requests('GET', 'other', 404)).toBe(1)
    expect(requests('POST', '/authentication', 201)).toBe(1)
    expect(requests('POST', '/authentication', 401)).toBe(2)
    expect(requests('POST', '/authentication', 429)).toBe(1)
    // Bounded cardinality: no id, query or unknown path becomes a label value; socket.io's own requests are not HTTP
    // requests here.
    const routes = new Set(
      samplesOf(metrics, 'http_server_request_duration_seconds_count').map((sample) => sample.labels.http_route)
    )
    expect([...routes].sort()).toEqual(['/authentication', '/messages', '/messages/:id', '/users', 'other'])
    expect(
      metrics.samples.some((sample) => Object.values(sample.labels).some((value) => /424242|737373|\?/.test(value)))
    ).toBe(false)
    // Buckets add up to the count.
    expect(
      valueOf(metrics, 'http_server_request_duration_seconds_bucket', {
        http_request_method: 'GET',
        http_route: '/messages',
        http_response_status_code: '200',
        le: '+Inf'
      })
    ).toBe(2)

    const calls = (service: string, method: string, transport: string, outcome: string) =>
      valueOf(metrics, 'plumage_service_call_duration_seconds_count', { service, method, transport, outcome })
    expect(calls('messages', 'find', 'rest', 'ok')).toBe(2)
    expect(calls('messages', 'get', 'rest', 'NotFound')).toBe(1)
    expect(calls('messages', 'create', 'rest', 'BadRequest')).toBe(1)
    expect(calls('messages', 'create', 'rest', 'ok')).toBe(1)
    expect(calls('messages', 'create', 'socketio', 'ok')).toBe(1)
    expect(calls('authentication', 'create', 'socketio', 'ok')).toBe(1)
    expect(calls('authentication', 'create', 'rest', 'NotAuthenticated')).toBe(2)
    expect(calls('authentication', 'create', 'rest', 'TooManyRequests')).toBe(1)

    expect(valueOf(metrics, 'plumage_connections_open', { transport: 'socketio' })).toBe(1)
    expect(valueOf(metrics, 'plumage_events_published_total', { service: 'messages', event: 'created' })).toBe(2)
    expect(valueOf(metrics, 'plumage_events_delivered_total', { service: 'messages', event: 'created' })).toBe(2)
    expect(valueOf(metrics, 'plumage_logins_failed_total')).toBe(2)
    expect(valueOf(metrics, 'plumage_logins_throttled_total')).toBe(1)
    const queries = (collection: string, operation: string) =>
      valueOf(metrics, 'db_client_operation_duration_seconds_count', {
        db_system_name: 'memory',
        db_collection_name: collection,
        db_operation_name: operation
      })
    expect(queries('messages', 'create')).toBe(2)
    expect(queries('messages', 'page')).toBe(2)
    expect(queries('users', 'create')).toBe(1)
    // Process metrics (prom-client's defaults).
    expect(valueOf(metrics, 'process_cpu_user_seconds_total')).toBeGreaterThan(0)
    expect(metrics.types.get('nodejs_eventloop_lag_seconds')).toBe('gauge')
    // Declared without a RethinkDB store, with no series yet.
    expect(metrics.types.get('plumage_event_log_lag_seconds')).toBe('gauge')
    expect(metrics.types.get('plumage_feed_state')).toBe('gauge')
  })

  it('sees the socket close, and its own scrapes under /metrics', async () => {
    const closed = new Promise((resolve) => server.app.once('disconnect', resolve))
    socket!.disconnect()
    await closed
    const metrics = await scrape(server)
    expect(valueOf(metrics, 'plumage_connections_open', { transport: 'socketio' })).toBe(0)
    expect(
      valueOf(metrics, 'http_server_request_duration_seconds_count', {
        http_request_method: 'GET',
        http_route: '/metrics',
        http_response_status_code: '200'
      })
    ).toBe(1)
  })

  it('is not in the OpenAPI document', async () => {
    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, unknown> }
    expect(Object.keys(document.paths)).toContain('/messages')
    expect(Object.keys(document.paths).filter((path) => path.includes('metrics'))).toEqual([])
  })
})

describe.each(ENGINES)('METRICS and METRICS_TOKEN on %s', (engine) => {
  it('METRICS=false: no endpoint (404)', async () => {
    const server = await startAuthServer({ AUTH_SECRET, HTTP: engine, METRICS: 'false' })
    try {
      const response = await fetch(`${server.url}/metrics`)
      expect(response.status).toBe(404)
      expect(await response.json()).toMatchObject({ name: 'NotFound' })
    } finally {
      await server.close()
    }
  })

  it('METRICS_TOKEN: 401 without the bearer token or with another one, 200 with it', async () => {
    const token = 'scrape-token-0123456789'
    const server = await startAuthServer({ AUTH_SECRET, HTTP: engine, METRICS_TOKEN: token })
    try {
      for (const authorization of [
        undefined,
        'Bearer wrong-token',
        `Basic ${token}`,
        `Bearer ${token}x`,
        `Bearer ${token.slice(0, -1)}`
      ]) {
        const response = await fetch(`${server.url}/metrics`, { headers: authorization ? { authorization } : {} })
        expect(response.status).toBe(401)
        expect(response.headers.get('www-authenticate')).toBe('Bearer realm="metrics"')
        const body = (await response.json()) as Record<string, unknown>
        expect(body).toMatchObject({ name: 'NotAuthenticated', code: 401 })
        expect(JSON.stringify(body)).not.toContain(token)
      }
      const response = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })
      expect(response.status).toBe(200)
      expect(parseExposition(await response.text()).types.get('http_server_request_duration_seconds')).toBe('histogram')
    } finally {
      await server.close()
    }
  })
})
