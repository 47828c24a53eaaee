import type { Logger } from '../../domain/logger.js'
import type { Tracer } from '../../domain/tracing.js'
import { OpenTelemetryTracer, type OpenTelemetryApi } from './open-telemetry-tracer.js'
import type { TracingSettings } from './tracing-settings.js'

/** Tracing started: the tracer to bind, and what main.ts does with the SDK later. */
export interface Tracing {
  tracer: Tracer
  /** Export problems (an unreachable collector) become warnings of this logger; none are logged before. */
  reportTo(logger: Logger): void
  /** Exports the spans still buffered and stops (on shutdown). */
  shutdown(): Promise<void>
}

/**
 * Starts the OpenTelemetry SDK: a NodeTracerProvider (AsyncLocalStorage context, W3C trace-context
 * propagation) batching spans to the OTLP/HTTP exporter (JSON). Every OpenTelemetry package is
 * imported here, dynamically — a bundle with static imports would load them on every start — so a
 * server without an OTLP endpoint never loads them.
 */
export async function startTracing(settings: TracingSettings): Promise<Tracing> {
  const [api, { NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { defaultResource, resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/api') as Promise<OpenTelemetryApi>,
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources')
  ])
  const provider = new NodeTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ 'service.name': settings.serviceName })),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.tracesUrl }))]
  })
  provider.register()
  return {
    tracer: new OpenTelemetryTracer(api, provider.getTracer('plumage')),
    reportTo(logger) {
      const warn = (message: string) => logger.warn(`OpenTelemetry: ${message}`)
      api.diag.setLogger({ error: warn, warn, info() {}, debug() {}, verbose() {} }, api.DiagLogLevel.WARN)
    },
    shutdown: () => provider.shutdown()
  }
}
