import type { Logger } from '../../domain/logger.js'
import type { Tracer } from '../../domain/tracing.js'
import { OpenTelemetryTracer, type OpenTelemetryApi } from './open-telemetry-tracer.js'
import type { TracingSettings } from './tracing-settings.js'

/** Tracing started: the tracer to bind, and what main.ts does with the SDK later. */
export interface Tracing {
  tracer: Tracer
  /** Export problems (an unreachable collector) become warnings of this logger; none are logged before. */
  reportTo(logger: Logger): void
  /**
   * Exports the spans still buffered and stops (on shutdown). Never rejects: a collector that cannot be
   * reached costs a warning and at most SHUTDOWN_WAIT_MS, and its spans are lost.
   */
  shutdown(): Promise<void>
}

/** How long shutdown waits for the last export (the exporter itself retries for up to 10 s). */
const SHUTDOWN_WAIT_MS = 5_000

/**
 * Starts the OpenTelemetry SDK: a NodeTracerProvider (AsyncLocalStorage context, W3C trace-context
 * propagation) batching spans to the OTLP/HTTP exporter (JSON). Every OpenTelemetry package is
 * imported here, dynamically — a bundle with static imports would load them on every start — so a
 * server without an OTLP endpoint never loads them.
 */
export async function startTracing(settings: TracingSettings): Promise<Tracing> {
  const [
    api,
    { NodeTracerProvider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { defaultResource, resourceFromAttributes }
  ] = await Promise.all([
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
  let warn = (_message: string, _details?: Record<string, unknown>) => {}
  return {
    tracer: new OpenTelemetryTracer(api, provider.getTracer('plumage')),
    reportTo(logger) {
      warn = (message, details) => logger.warn(`OpenTelemetry: ${message}`, details)
      api.diag.setLogger(
        { error: (message) => warn(message), warn: (message) => warn(message), info() {}, debug() {}, verbose() {} },
        api.DiagLogLevel.WARN
      )
    },
    async shutdown() {
      let timer: ReturnType<typeof setTimeout> | undefined
      const waited = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          warn(`the last spans could not be exported within ${SHUTDOWN_WAIT_MS / 1000} s`)
          resolve()
        }, SHUTDOWN_WAIT_MS)
      })
      const exported = provider
        .shutdown()
        .catch((error: unknown) =>
          warn('the last spans could not be exported', { error: (error as Error)?.message ?? String(error) })
        )
      await Promise.race([exported, waited])
      clearTimeout(timer)
    }
  }
}
