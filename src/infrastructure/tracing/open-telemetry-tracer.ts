import type * as OpenTelemetry from '@opentelemetry/api'
import type { Span, SpanAttributes, SpanIds, SpanKind, SpanOptions, Tracer } from '../../domain/tracing.js'

/** `@opentelemetry/api`, loaded by start-tracing.ts only when tracing is on (nothing here imports it). */
export type OpenTelemetryApi = typeof OpenTelemetry

/**
 * The Tracer port over the OpenTelemetry API. The active span lives in the API's context (the SDK's
 * AsyncLocalStorage context manager carries it across awaits); `traceparent` strings are read and
 * written with the registered W3C propagator.
 */
export class OpenTelemetryTracer implements Tracer {
  readonly enabled = true
  private readonly kinds: Record<SpanKind, OpenTelemetry.SpanKind>

  constructor(
    private readonly api: OpenTelemetryApi,
    private readonly tracer: OpenTelemetry.Tracer
  ) {
    const { SpanKind } = api
    this.kinds = {
      internal: SpanKind.INTERNAL,
      server: SpanKind.SERVER,
      client: SpanKind.CLIENT,
      producer: SpanKind.PRODUCER,
      consumer: SpanKind.CONSUMER
    }
  }

  run<T>(name: string, options: SpanOptions, fn: (span: Span) => T): T {
    const { api } = this
    const parent =
      options.parent === undefined
        ? api.context.active()
        : options.parent === null
          ? api.ROOT_CONTEXT
          : this.extract(options.parent)
    const span = this.tracer.startSpan(
      name,
      {
        kind: this.kinds[options.kind ?? 'internal'],
        ...(options.attributes ? { attributes: defined(options.attributes) } : {}),
        ...(options.links?.length ? { links: this.links(options.links) } : {})
      },
      parent
    )
    const handle = new OpenTelemetrySpan(span, api)
    const failed = (error: unknown) => {
      if (options.isError?.(error) ?? true) handle.fail(error)
      else span.setAttribute('error.type', errorType(error))
      span.end()
    }
    return api.context.with(api.trace.setSpan(parent, span), () => {
      let result: T
      try {
        result = fn(handle)
      } catch (error) {
        failed(error)
        throw error
      }
      if (!(result instanceof Promise)) {
        span.end()
        return result
      }
      return result.then(
        (value: unknown) => {
          span.end()
          return value
        },
        (error: unknown) => {
          failed(error)
          throw error
        }
      ) as T
    })
  }

  traceparent(): string | undefined {
    const carrier: { traceparent?: string } = {}
    this.api.propagation.inject(this.api.context.active(), carrier)
    return carrier.traceparent
  }

  ids(): SpanIds | undefined {
    const context = this.api.trace.getSpanContext(this.api.context.active())
    if (!context || !this.api.isSpanContextValid(context)) return undefined
    return { traceId: context.traceId, spanId: context.spanId }
  }

  /** The remote parent a `traceparent` names; an invalid one starts a new trace. */
  private extract(traceparent: string): OpenTelemetry.Context {
    return this.api.propagation.extract(this.api.ROOT_CONTEXT, { traceparent })
  }

  private links(traceparents: readonly string[]): OpenTelemetry.Link[] {
    return traceparents.flatMap((traceparent) => {
      const context = this.api.trace.getSpanContext(this.extract(traceparent))
      return context && this.api.isSpanContextValid(context) ? [{ context }] : []
    })
  }
}

class OpenTelemetrySpan implements Span {
  constructor(
    private readonly span: OpenTelemetry.Span,
    private readonly api: OpenTelemetryApi
  ) {}

  setAttributes(attributes: SpanAttributes): void {
    this.span.setAttributes(defined(attributes))
  }

  fail(error: unknown): void {
    this.span.setAttribute('error.type', errorType(error))
    if (error instanceof Error) this.span.recordException(error)
    this.span.setStatus({
      code: this.api.SpanStatusCode.ERROR,
      ...(error instanceof Error ? { message: error.message } : {})
    })
  }
}

/** The error's class (`NotFound`, `TypeError`), or the string given (e.g. an HTTP status code). */
function errorType(error: unknown): string {
  if (typeof error === 'string' || typeof error === 'number') return String(error)
  return error instanceof Error ? error.name : '_OTHER'
}

function defined(attributes: SpanAttributes): OpenTelemetry.Attributes {
  const result: OpenTelemetry.Attributes = {}
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) result[key] = value
  return result
}
