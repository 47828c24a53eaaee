/**
 * The tracing module's adapters (README "Traces"): the OpenTelemetry SDK started from OTEL_* settings, the app
 * extension that traces calls and publications, and the store decorator that traces queries. Wired in
 * src/modules/tracing.ts.
 */
export { startTracing, type Tracing } from './start-tracing.js'
export { tracedStoreFactory } from './traced-store-factory.js'
export { tracingExtension } from './tracing-extension.js'
export { readTracingSettings, type TracingSettings } from './tracing-settings.js'
