import { ConfigError, flag, type Env } from '../config/environment.js'

/** Where and as what spans are exported; read from the standard OpenTelemetry variables. */
export interface TracingSettings {
  /** The OTLP/HTTP traces URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`. */
  tracesUrl: string
  /** The `service.name` of every span (OTEL_SERVICE_NAME, default `plumage`). */
  serviceName: string
}

/**
 * Tracing is on when an OTLP endpoint is set (and OTEL_SDK_DISABLED is not true); undefined means
 * off, and then the OpenTelemetry SDK is never loaded. The exporter reads the other OTEL_EXPORTER_OTLP_*
 * variables itself (headers, timeout, compression, certificates), the SDK OTEL_TRACES_SAMPLER and OTEL_BSP_*.
 */
export function readTracingSettings(env: Env): TracingSettings | undefined {
  if (flag(env, 'OTEL_SDK_DISABLED', false)) return undefined
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || undefined
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined
  if (traces === undefined && base === undefined) return undefined
  const [name, value] =
    traces !== undefined ? ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', traces] : ['OTEL_EXPORTER_OTLP_ENDPOINT', base!]
  if (!/^https?:$/.test(protocolOf(value))) {
    throw new ConfigError(
      `${name} must be an http:// or https:// URL such as http://127.0.0.1:4318 (got '${withoutCredentials(value)}')`
    )
  }
  return {
    tracesUrl: traces !== undefined ? traces : `${value.replace(/\/+$/, '')}/v1/traces`,
    serviceName: env.OTEL_SERVICE_NAME || 'plumage'
  }
}

function protocolOf(value: string): string {
  try {
    return new URL(value).protocol
  } catch {
    return ''
  }
}

/** A URL as it may be printed: user and password replaced by `***`. */
function withoutCredentials(value: string): string {
  return value.replace(/\/\/[^/@]*@/, '//***@')
}
