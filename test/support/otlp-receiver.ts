import { createServer, type Server } from 'node:http'

/*
 * A minimal OpenTelemetry collector for tests: an HTTP server on 127.0.0.1 accepting OTLP/HTTP JSON
 * exports at POST /v1/traces (what @opentelemetry/exporter-trace-otlp-http sends), keeping every span.
 */

/** One received span, its attributes as a plain object. */
export interface ReceivedSpan {
  traceId: string
  spanId: string
  /** '' for a root span. */
  parentSpanId: string
  name: string
  /** OTLP's numbers: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number
  attributes: Record<string, unknown>
  links: { traceId: string; spanId: string }[]
  /** 0 unset, 1 ok, 2 error. */
  status: { code?: number; message?: string }
  events: { name: string; attributes: Record<string, unknown> }[]
  /** The exporting process's resource attributes (service.name…). */
  resource: Record<string, unknown>
}

export interface OtlpReceiver {
  /** The endpoint to set as OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string
  spans: ReceivedSpan[]
  /** Export requests that were not POST /v1/traces with a JSON body. */
  rejected: string[]
  close(): Promise<void>
}

interface OtlpValue {
  stringValue?: string
  intValue?: string | number
  boolValue?: boolean
  doubleValue?: number
}
interface OtlpAttribute {
  key: string
  value: OtlpValue
}
interface OtlpSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  attributes?: OtlpAttribute[]
  links?: { traceId: string; spanId: string }[]
  status?: { code?: number; message?: string }
  events?: { name: string; attributes?: OtlpAttribute[] }[]
}
interface OtlpExport {
  resourceSpans: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans: { spans?: OtlpSpan[] }[] }[]
}

function value(raw: OtlpValue): unknown {
  if (raw.stringValue !== undefined) return raw.stringValue
  if (raw.intValue !== undefined) return Number(raw.intValue)
  if (raw.boolValue !== undefined) return raw.boolValue
  return raw.doubleValue
}

function attributes(list: OtlpAttribute[] = []): Record<string, unknown> {
  return Object.fromEntries(list.map(({ key, value: raw }) => [key, value(raw)]))
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = []
  const rejected: string[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      if (
        req.method !== 'POST' ||
        req.url !== '/v1/traces' ||
        !String(req.headers['content-type']).startsWith('application/json')
      ) {
        rejected.push(`${req.method} ${req.url} ${req.headers['content-type']}`)
        res.writeHead(404).end()
        return
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport
      for (const { resource, scopeSpans } of body.resourceSpans) {
        for (const scope of scopeSpans) {
          for (const span of scope.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? '',
              name: span.name,
              kind: span.kind,
              attributes: attributes(span.attributes),
              links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
              status: span.status ?? {},
              events: (span.events ?? []).map((event) => ({
                name: event.name,
                attributes: attributes(event.attributes)
              })),
              resource: attributes(resource?.attributes)
            })
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    rejected,
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
}
