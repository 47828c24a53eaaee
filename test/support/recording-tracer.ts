import { AsyncLocalStorage } from 'node:async_hooks'
import type { Span, SpanAttributes, SpanIds, SpanOptions, Tracer } from '../../src/domain/tracing.js'

/** One span the RecordingTracer ran. */
export interface RecordedSpan {
  name: string
  options: SpanOptions
  /** The span active when it started (undefined at the top, or with `parent` given). */
  parent?: RecordedSpan
  attributes: SpanAttributes
  /** What `fail` was called with (or the rejection `isError` accepted). */
  failure?: unknown
  /** The rejection it ended with, failed or not. */
  error?: unknown
  traceparent: string
}

/**
 * A Tracer for use-case tests: records each span with its parent (the active one, carried across
 * awaits by AsyncLocalStorage as the OpenTelemetry adapter's context is), its options and outcome.
 */
export class RecordingTracer implements Tracer {
  readonly enabled = true
  readonly spans: RecordedSpan[] = []
  private readonly active = new AsyncLocalStorage<RecordedSpan>()

  run<T>(name: string, options: SpanOptions, fn: (span: Span) => T): T {
    const index = this.spans.length
    const recorded: RecordedSpan = {
      name,
      options,
      attributes: { ...options.attributes },
      ...(options.parent === undefined && this.active.getStore() ? { parent: this.active.getStore()! } : {}),
      traceparent: `00-${'1'.repeat(32)}-${(index + 1).toString(16).padStart(16, '0')}-01`
    }
    this.spans.push(recorded)
    const span: Span = {
      setAttributes: (attributes) => Object.assign(recorded.attributes, attributes),
      fail: (error) => {
        recorded.failure = error
      }
    }
    const failed = (error: unknown) => {
      recorded.error = error
      if (options.isError?.(error) ?? true) recorded.failure = error
    }
    return this.active.run(recorded, () => {
      try {
        const result = fn(span)
        return (
          result instanceof Promise
            ? result.catch((error: unknown) => {
                failed(error)
                throw error
              })
            : result
        ) as T
      } catch (error) {
        failed(error)
        throw error
      }
    })
  }

  traceparent(): string | undefined {
    return this.active.getStore()?.traceparent
  }

  ids(): SpanIds | undefined {
    const span = this.active.getStore()
    return span && { traceId: '1'.repeat(32), spanId: span.traceparent.slice(36, 52) }
  }

  named(name: string): RecordedSpan[] {
    return this.spans.filter((span) => span.name === name)
  }
}
