import { FeathersError } from './errors/errors.js'

/**
 * The tracing port: spans around the units of work (an HTTP request, a socket call, a service method
 * with its hooks, a store query, the publication of an event). OpenTelemetry when an OTLP endpoint is
 * configured (src/infrastructure/tracing), otherwise `noTracer`, which does nothing and costs nothing.
 */
export interface Tracer {
  /** False for `noTracer`: callers skip building names and attributes. */
  readonly enabled: boolean
  /**
   * Runs `fn` inside a new span (the active span inside it, so spans started by `fn` are its
   * children) and ends the span when `fn` returns, or when the promise it returns settles. What `fn`
   * throws or rejects with is recorded as `error.type` (and fails the span when `isError` agrees)
   * and passed on unchanged.
   */
  run<T>(name: string, options: SpanOptions, fn: (span: Span) => T): T
  /** The active span as a W3C `traceparent` header value (to store with an event), undefined without one. */
  traceparent(): string | undefined
  /** The active span's ids, for log lines; undefined without one. */
  ids(): SpanIds | undefined
}
export const Tracer = Symbol.for('Tracer')

export type SpanKind = 'internal' | 'server' | 'client' | 'producer' | 'consumer'

/** Attribute values as OpenTelemetry accepts them. Never put secrets, payloads or queries' values here. */
export type SpanAttributes = Record<string, string | number | boolean | undefined>

export interface SpanOptions {
  /** Default `internal`. */
  kind?: SpanKind
  attributes?: SpanAttributes
  /**
   * Undefined: a child of the active span. A string: a child of that remote `traceparent` (a caller's
   * header), or a new trace when it is not a valid one. `null`: a new trace whatever is active.
   */
  parent?: string | null
  /** `traceparent` values of causally related spans in other traces (e.g. the write that caused an event). */
  links?: readonly string[]
  /** Which rejections fail the span (default: every one); e.g. a server span fails on 5xx only. */
  isError?(error: unknown): boolean
}

export interface Span {
  setAttributes(attributes: SpanAttributes): void
  /** Marks the span failed: status ERROR, `error.type`, and the exception when `error` is one. */
  fail(error: unknown): void
}

export interface SpanIds {
  traceId: string
  spanId: string
}

const noSpan: Span = { setAttributes() {}, fail() {} }

/**
 * A failure of the server rather than of the caller: a 5xx, or anything that is not a Feathers error.
 * Server spans (and service spans) fail on these only, as HTTP servers' spans do not on a 4xx.
 */
export function isServerError(error: unknown): boolean {
  return !(error instanceof FeathersError) || error.code >= 500
}

/** Tracing off: runs the work as is. */
export const noTracer: Tracer = {
  enabled: false,
  run: (_name, _options, fn) => fn(noSpan),
  traceparent: () => undefined,
  ids: () => undefined
}
