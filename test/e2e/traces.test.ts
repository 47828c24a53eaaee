import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { readdir, readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { buildServer, type BuiltServer } from '../support/built-server.js'
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js'
import { connectSocket, call, request, signup } from '../support/reference-server.js'

/*
 * Traces of the built server (`node dist/plumage.mjs`) with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a
 * receiver in this test: the span tree of a REST call and of a socket call, the caller's traceparent
 * honoured, trace ids in the log lines of a request, publications linked to the write, nothing
 * secret in attributes. The batch delay is longer than the test, so spans arrive only because the
 * SIGTERM shutdown flushes them. Without the endpoint the bundle does not even load the SDK.
 */
const SERVER = 2
const CLIENT = 3
const PRODUCER = 4
const ERROR = 2
const PASSWORD = 'secret-pw-of-ann'
const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c'
const CALLER_SPAN = 'b7ad6b7169203331'

let built: BuiltServer

beforeAll(async () => {
  built = await buildServer('traces')
}, 60_000)

afterAll(async () => {
  await built?.cleanup()
})

interface LogLine {
  msg: string
  trace_id?: string
  span_id?: string
  req?: { url: string; method: string }
}

describe.each(['express', 'fastify'])('traces over OTLP/HTTP (%s)', (engine) => {
  let receiver: OtlpReceiver
  let logs: LogLine[]
  let token: string
  let exitCode: number | null

  beforeAll(async () => {
    receiver = await startOtlpReceiver()
    const server = await built.start({
      HTTP: engine,
      AUTH_SECRET: 'traces-test-secret-16+',
      BCRYPT_ROUNDS: '4',
      REQUEST_LOG: 'true',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '600000'
    })
    const url = `http://127.0.0.1:${server.port}`
    ;({ token } = await signup(url, 'ann@example.com', PASSWORD))
    const traced = { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` }
    expect(
      (await request(url, 'POST', '/messages', { body: { text: 'over REST' }, token, headers: traced })).status
    ).toBe(201)
    expect((await request(url, 'GET', '/messages/999', { token })).status).toBe(404)
    const socket = await connectSocket(url, token)
    const [error] = await call(socket, 'create', 'messages', { text: 'over a socket' }, {})
    expect(error).toBeNull()
    socket.disconnect()
    server.child.kill('SIGTERM')
    const lines: string[] = server.startup.slice()
    for (let line = await server.logs.next(); !line.done; line = await server.logs.next()) lines.push(line.value)
    logs = lines.map((line) => JSON.parse(line) as LogLine)
    exitCode = await server.exited
  }, 60_000)

  afterAll(() => receiver?.close())

  const named = (name: string) => receiver.spans.filter((span) => span.name === name)
  const childrenOf = (parent: ReceivedSpan) =>
    receiver.spans.filter((span) => span.parentSpanId === parent.spanId && span.traceId === parent.traceId)

  it('exports every span on shutdown, as JSON to <endpoint>/v1/traces, under service.name plumage', () => {
    expect(exitCode).toBe(0)
    expect(receiver.rejected).toEqual([])
    expect(receiver.spans.length).toBeGreaterThan(5)
    expect(new Set(receiver.spans.map((span) => span.resource['service.name']))).toEqual(new Set(['plumage']))
  })

  it("a REST call: HTTP server span → service span with its hooks → store span, in the caller's trace", () => {
    const [http] = named('POST /messages').filter((span) => span.traceId === CALLER_TRACE)
    expect(http).toMatchObject({
      kind: SERVER,
      parentSpanId: CALLER_SPAN,
      attributes: {
        'http.request.method': 'POST',
        'http.route': '/messages',
        'url.path': '/messages',
        'http.response.status_code': 201
      }
    })
    const [service, ...others] = childrenOf(http!)
    expect(others).toEqual([])
    expect(service).toMatchObject({
      name: 'messages.create',
      attributes: { 'plumage.service': 'messages', 'plumage.method': 'create', 'plumage.provider': 'rest' }
    })
    const children = childrenOf(service!)
    // Calls within the call: the authenticate hook reads the user, and the message's resolver its author (one find).
    expect(children.map((span) => span.name).sort()).toEqual(['create messages', 'users.find', 'users.get'])
    expect(children.find((span) => span.name === 'create messages')).toMatchObject({
      kind: CLIENT,
      attributes: {
        'db.system.name': 'memory',
        'db.system': 'memory',
        'db.operation.name': 'create',
        'db.collection.name': 'messages'
      }
    })
    const [usersGet] = children.filter((span) => span.name === 'users.get')
    expect(childrenOf(usersGet!).map((span) => span.name)).toEqual(['get users'])
  })

  it("a 404 is the caller's error: the service span says NotFound, the HTTP span does not fail", () => {
    const [http] = named('GET /messages/:id')
    expect(http).toMatchObject({
      parentSpanId: '',
      attributes: { 'http.route': '/messages/:id', 'url.path': '/messages/999', 'http.response.status_code': 404 }
    })
    expect(http!.status.code ?? 0).not.toBe(ERROR)
    const [service] = childrenOf(http!)
    expect(service).toMatchObject({ name: 'messages.get', attributes: { 'error.type': 'NotFound' } })
    expect(service!.status.code ?? 0).not.toBe(ERROR)
  })

  it('a socket call: its own trace, server span `<path> <method>` → service span → store span', () => {
    const [socketCall] = named('messages create')
    expect(socketCall).toMatchObject({
      kind: SERVER,
      parentSpanId: '',
      attributes: { 'rpc.system.name': 'socket.io', 'rpc.method': 'messages/create' }
    })
    const [service] = childrenOf(socketCall!)
    expect(service).toMatchObject({ name: 'messages.create', attributes: { 'plumage.provider': 'socketio' } })
    expect(childrenOf(service!).map((span) => span.name)).toContain('create messages')
  })

  it('a socket handshake with a token: `socket.io connect` → the login it makes', () => {
    const [connect] = named('socket.io connect')
    expect(connect).toMatchObject({
      kind: SERVER,
      parentSpanId: '',
      attributes: { 'rpc.system.name': 'socket.io', 'rpc.method': 'connect' }
    })
    expect(childrenOf(connect!).map((span) => span.name)).toEqual(['authentication.create'])
  })

  it('each event is published in a span of its own trace, linked to the call that wrote it', () => {
    const writes = named('messages.create')
    const publications = named('messages created publish')
    expect(publications).toHaveLength(2)
    for (const publication of publications) {
      expect(publication).toMatchObject({
        kind: PRODUCER,
        parentSpanId: '',
        attributes: { 'messaging.destination.name': 'messages created' }
      })
      expect(writes.map(({ traceId, spanId }) => ({ traceId, spanId }))).toContainEqual(publication.links[0])
    }
    expect(publications.map((span) => span.links[0]!.traceId)).toContain(CALLER_TRACE)
  })

  it('every log line of a traced request carries its trace and span ids; lines outside requests carry none', () => {
    const [http] = named('POST /messages').filter((span) => span.traceId === CALLER_TRACE)
    const requestLine = logs.find(
      (line) => line.msg === 'request completed' && line.req?.url === '/messages' && line.req.method === 'POST'
    )
    expect(requestLine).toMatchObject({ trace_id: CALLER_TRACE, span_id: http!.spanId })
    const requestLines = logs.filter((line) => line.msg === 'request completed')
    expect(requestLines.length).toBeGreaterThanOrEqual(4)
    for (const line of requestLines) expect(line.trace_id).toMatch(/^[0-9a-f]{32}$/)
    expect(logs.find((line) => line.msg === 'shutting down')).toBeDefined()
    expect(logs.find((line) => line.msg === 'shutting down')).not.toHaveProperty('trace_id')
  })

  it('puts no password, token or payload in any attribute', () => {
    const exported = JSON.stringify(receiver.spans)
    expect(exported).not.toContain(PASSWORD)
    expect(exported).not.toContain(token)
    expect(exported).not.toContain('over REST')
    expect(exported).not.toContain('ann@example.com')
  })

  it('writes no bearer token in the request log lines (pino-http on express shows the header as ***; fastify logs no headers)', () => {
    const requestLines = logs.filter((line) => line.msg === 'request completed')
    expect(JSON.stringify(requestLines)).not.toContain(token)
    const logged = requestLines
      .map((line) => (line.req as { headers?: { authorization?: string } } | undefined)?.headers?.authorization)
      .filter(Boolean)
    expect(new Set(logged)).toEqual(engine === 'express' ? new Set(['***']) : new Set())
  })
})

describe('tracing off', () => {
  it('the bundle imports the OpenTelemetry packages only dynamically: a start without an endpoint never loads them', async () => {
    const bundle = await readFile(built.main, 'utf8')
    // The tracing module is a chunk of its own, imported when an endpoint is set; the SDK is imported from it.
    const chunks = join(dirname(built.main), 'chunks')
    const sources = await Promise.all(
      (await readdir(chunks))
        .filter((name) => name.endsWith('.mjs'))
        .map((name) => readFile(join(chunks, name), 'utf8'))
    )
    expect(sources.some((source) => /import\("@opentelemetry\/sdk-trace-node"\)/.test(source))).toBe(true)
    for (const source of [bundle, ...sources]) {
      expect(source).not.toMatch(/^import .* from "@opentelemetry\//m)
      expect(source).not.toMatch(/^import "@opentelemetry\//m)
    }
    expect(bundle).not.toMatch(/@opentelemetry\/sdk-trace-node/)
  })
})
