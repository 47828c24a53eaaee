import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { existsSync, readFileSync } from 'node:fs'
import { parse } from 'yaml'
import { AUTH_SECRET, startAuthServer, type AuthServer } from '../support/auth-server.js'
import { parseExposition, type Exposition } from '../support/prometheus-text.js'

/*
 * The `observability` profile of docker-compose.yml, without a Docker engine: every file parses,
 * the pieces point at each other (service names, ports, mounted files), the default services are
 * untouched, and every metric the Grafana dashboard queries is one a real server exposes at
 * /metrics — and every metric of plumage's own is on the dashboard.
 */
interface ComposeService {
  profiles?: string[]
  build?: unknown
  image?: string
  environment?: Record<string, string>
  volumes?: string[]
  ports?: string[]
}
interface Compose {
  services: Record<string, ComposeService>
}
interface Panel {
  type: string
  title: string
  datasource?: { uid: string }
  targets?: { expr: string; datasource?: { uid: string } }[]
}
interface Dashboard {
  uid: string
  panels: Panel[]
  templating: { list: { query: { query: string } }[] }
}

const yaml = <T>(path: string): T => parse(readFileSync(path, 'utf8')) as T
const compose = yaml<Compose>('docker-compose.yml')
const tracing = yaml<Compose>('docker-compose.observability.yml')
const prometheus = yaml<{
  scrape_configs: {
    job_name: string
    metrics_path?: string
    dns_sd_configs?: { names: string[]; type: string; port: number }[]
  }[]
}>('ops/prometheus.yml')
const datasources = yaml<{ datasources: { uid: string; type: string; url: string }[] }>(
  'ops/grafana/provisioning/datasources/datasources.yml'
)
const providers = yaml<{ providers: { options: { path: string } }[] }>(
  'ops/grafana/provisioning/dashboards/dashboards.yml'
)
const dashboard = JSON.parse(readFileSync('ops/grafana/dashboards/plumage.json', 'utf8')) as Dashboard

const services = Object.entries(compose.services)
/** The plumage instances: the services built from this repository. */
const apps = services.filter(([, service]) => service.build !== undefined).map(([name]) => name)
const OBSERVABILITY = ['prometheus', 'grafana', 'jaeger']

/** `./ops/x:/etc/x:ro` → the host path and the container path. */
function mounts(service: ComposeService): { host: string; container: string }[] {
  return (service.volumes ?? [])
    .map((volume) => volume.split(':'))
    .map(([host, container]) => ({ host: host!, container: container! }))
}

/** Words of PromQL that are not metric names. */
const PROMQL_WORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset'
])

/** The metric names a PromQL expression (or a Grafana `label_values(metric, label)`) reads. */
function metricNames(expression: string): string[] {
  const bare = expression
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, ' ')
    .replace(/label_values\(\s*([a-zA-Z_:][\w:]*)\s*,[^)]*\)/g, ' $1 ')
  return [...bare.matchAll(/([a-zA-Z_:][\w:]*)\s*(\()?/g)]
    .filter(([word, , call]) => call === undefined && !PROMQL_WORDS.has(word!.trim()) && !/^\d/.test(word!))
    .map(([, name]) => name!)
}

/** The metric a sample or series name belongs to (`x_bucket` of the histogram `x`). */
function declared(exposition: Exposition, name: string): boolean {
  if (exposition.types.has(name)) return true
  const base = name.replace(/_(bucket|count|sum)$/, '')
  return base !== name && ['histogram', 'summary'].includes(exposition.types.get(base) ?? '')
}

describe('docker-compose.yml, profile observability', () => {
  it('leaves the default services as they were: rethinkdb and app, no tracing settings', () => {
    expect(services.filter(([, service]) => !service.profiles).map(([name]) => name)).toEqual(['rethinkdb', 'app'])
    for (const [, service] of services)
      expect(Object.keys(service.environment ?? {}).filter((name) => name.startsWith('OTEL_'))).toEqual([])
  })

  it('adds Prometheus, Grafana and Jaeger (OTLP over HTTP on 4318) in the profile, mounting files of the repository', () => {
    for (const name of OBSERVABILITY) expect(compose.services[name]?.profiles).toEqual(['observability'])
    expect(compose.services.jaeger!.ports).toContain('4318:4318')
    const files = [...mounts(compose.services.prometheus!), ...mounts(compose.services.grafana!)]
    expect(files.map(({ container }) => container).sort()).toEqual([
      '/etc/grafana/provisioning',
      '/etc/prometheus/prometheus.yml',
      '/var/lib/grafana/dashboards'
    ])
    for (const { host } of files) expect(`${host}: ${existsSync(host)}`).toBe(`${host}: true`)
  })

  it('sends the traces of every app service to Jaeger, through the second file only', () => {
    expect(Object.keys(tracing.services).sort()).toEqual([...apps].sort())
    for (const service of Object.values(tracing.services))
      expect(service).toEqual({ environment: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318' } })
  })

  it('has Prometheus scrape /metrics of every app service on its port', () => {
    const job = prometheus.scrape_configs.find((config) => config.job_name === 'plumage')!
    expect(job.metrics_path).toBe('/metrics')
    const names = job.dns_sd_configs!.flatMap((config) => config.names)
    expect([...names].sort()).toEqual([...apps].sort())
    for (const config of job.dns_sd_configs!) {
      for (const name of config.names) expect(String(config.port)).toBe(compose.services[name]!.environment!.PORT)
    }
  })

  it('provisions Grafana with Prometheus and Jaeger as data sources and the dashboard folder', () => {
    expect(datasources.datasources.map(({ type, url }) => `${type} ${url}`)).toEqual([
      'prometheus http://prometheus:9090',
      'jaeger http://jaeger:16686'
    ])
    const dashboards = mounts(compose.services.grafana!).find(({ host }) => host.endsWith('ops/grafana/dashboards'))!
    expect(providers.providers.map(({ options }) => options.path)).toEqual([dashboards.container])
    const uids = new Set(datasources.datasources.map(({ uid }) => uid))
    for (const panel of dashboard.panels.filter((each) => each.type !== 'row')) {
      expect(uids.has(panel.datasource!.uid)).toBe(true)
      for (const target of panel.targets!) expect(uids.has(target.datasource!.uid)).toBe(true)
    }
  })
})

describe('the Grafana dashboard against a real /metrics', () => {
  let server: AuthServer
  let exposition: Exposition
  const expressions = [
    ...dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr)),
    ...dashboard.templating.list.map((variable) => variable.query.query)
  ]
  const used = new Set(expressions.flatMap(metricNames))

  beforeAll(async () => {
    server = await startAuthServer({ AUTH_SECRET })
    exposition = parseExposition(await (await fetch(`${server.url}/metrics`)).text())
  })
  afterAll(() => server.close())

  it('reads the metric names out of PromQL', () => {
    expect(
      metricNames('histogram_quantile(0.99, sum by (le, http_route) (rate(x_bucket{instance=~"$instance"}[1m])))')
    ).toEqual(['x_bucket'])
    expect(metricNames('label_values(process_cpu_seconds_total, instance)')).toEqual(['process_cpu_seconds_total'])
    expect(used.size).toBeGreaterThan(10)
  })

  it('queries only metrics the server exposes', () => {
    expect([...used].filter((name) => !declared(exposition, name))).toEqual([])
  })

  it('shows every metric of plumage, of its HTTP requests and of its store', () => {
    const own = [...exposition.types.keys()].filter((name) => /^(plumage_|http_server_|db_client_)/.test(name))
    expect(own.length).toBeGreaterThanOrEqual(10)
    const shown = (name: string) =>
      [...used].some((each) => each === name || each.replace(/_(bucket|count|sum)$/, '') === name)
    expect(own.filter((name) => !shown(name))).toEqual([])
  })
})
