import { describe, expect, it } from '@jest/globals'
import { readTracingSettings } from '../../../src/infrastructure/tracing/tracing-settings.js'

describe('tracing settings (OTEL_*)', () => {
  it('are off without an OTLP endpoint, and when OTEL_SDK_DISABLED is true', () => {
    expect(readTracingSettings({})).toBeUndefined()
    expect(readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBeUndefined()
    expect(
      readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' })
    ).toBeUndefined()
  })

  it('export to <endpoint>/v1/traces as service plumage unless OTEL_SERVICE_NAME says otherwise', () => {
    expect(readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toEqual({
      tracesUrl: 'http://collector:4318/v1/traces',
      serviceName: 'plumage'
    })
    expect(
      readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com/otlp', OTEL_SERVICE_NAME: 'chat' })
    ).toEqual({ tracesUrl: 'https://otlp.example.com/otlp/v1/traces', serviceName: 'chat' })
  })

  it('take OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as the full URL, before the general endpoint', () => {
    expect(
      readTracingSettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/traces'
      })?.tracesUrl
    ).toBe('http://b:4318/traces')
  })

  it('refuse an endpoint that is not an http(s) URL, naming the variable and never printing credentials', () => {
    expect(() => readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317' })).toThrow(
      "OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL such as http://127.0.0.1:4318 (got 'collector:4317')"
    )
    expect(() =>
      readTracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://user:s3cret@collector:4317' })
    ).toThrow(
      "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http:// or https:// URL such as http://127.0.0.1:4318 (got 'grpc://***@collector:4317')"
    )
    expect(() =>
      readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'maybe' })
    ).toThrow('OTEL_SDK_DISABLED must be true or false')
  })
})
