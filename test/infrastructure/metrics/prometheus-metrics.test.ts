import { describe, expect, it } from '@jest/globals'
import { NotFound } from '../../../src/domain/errors/errors.js'
import { errorOutcome } from '../../../src/domain/metrics.js'
import { parseQuery } from '../../../src/domain/query/parse-query.js'
import type { StoreFactory } from '../../../src/domain/store/store-factory.js'
import { InMemoryStoreFactory } from '../../../src/infrastructure/memory/in-memory-store-factory.js'
import { MeasuredStoreFactory } from '../../../src/infrastructure/metrics/measured-store.js'
import { PrometheusMetrics } from '../../../src/infrastructure/metrics/prometheus-metrics.js'
import { parseExposition, valueOf } from '../../support/prometheus-text.js'

async function scrape(metrics: PrometheusMetrics) {
  return parseExposition((await metrics.render()).body)
}

describe('PrometheusMetrics', () => {
  it('reports the event-log lag per table as now minus the newest applied event, computed when scraped', async () => {
    let now = 10_000
    const metrics = new PrometheusMetrics({ defaultMetrics: false, now: () => now })
    metrics.eventApplied('messages', 9_000)
    metrics.eventApplied('messages', 8_500) // older, applied late: the newest stays
    metrics.eventApplied('users', 9_750)
    expect(valueOf(await scrape(metrics), 'plumage_event_log_lag_seconds', { table: 'messages' })).toBe(1)
    now = 12_000
    const later = await scrape(metrics)
    expect(valueOf(later, 'plumage_event_log_lag_seconds', { table: 'messages' })).toBe(3)
    expect(valueOf(later, 'plumage_event_log_lag_seconds', { table: 'users' })).toBe(2.25)
  })

  it('reports one feed state per table as 1, the others as 0', async () => {
    const metrics = new PrometheusMetrics({ defaultMetrics: false })
    metrics.feedState('messages', 'connecting')
    metrics.feedState('messages', 'live')
    metrics.feedState('plumage_events', 'stopped')
    const scraped = await scrape(metrics)
    const state = (table: string, name: string) => valueOf(scraped, 'plumage_feed_state', { table, state: name })
    expect([state('messages', 'connecting'), state('messages', 'live'), state('messages', 'stopped')]).toEqual([
      0, 1, 0
    ])
    expect([
      state('plumage_events', 'connecting'),
      state('plumage_events', 'live'),
      state('plumage_events', 'stopped')
    ]).toEqual([0, 0, 1])
  })

  it('keeps one child per label combination: repeated observations add up', async () => {
    const metrics = new PrometheusMetrics({ defaultMetrics: false })
    for (let i = 0; i < 3; i++) metrics.httpRequest('GET', '/messages', 200, 0.002)
    metrics.httpRequest('GET', '/messages', 404, 0.002)
    metrics.connectionOpened('socketio')
    metrics.connectionOpened('socketio')
    metrics.connectionClosed('socketio')
    const scraped = await scrape(metrics)
    expect(
      valueOf(scraped, 'http_server_request_duration_seconds_count', {
        http_request_method: 'GET',
        http_route: '/messages',
        http_response_status_code: '200'
      })
    ).toBe(3)
    expect(
      valueOf(scraped, 'http_server_request_duration_seconds_bucket', {
        http_request_method: 'GET',
        http_route: '/messages',
        http_response_status_code: '200',
        le: '0.005'
      })
    ).toBe(3)
    expect(
      valueOf(scraped, 'http_server_request_duration_seconds_count', {
        http_request_method: 'GET',
        http_route: '/messages',
        http_response_status_code: '404'
      })
    ).toBe(1)
    expect(valueOf(scraped, 'plumage_connections_open', { transport: 'socketio' })).toBe(1)
  })

  it('times every store operation, failed ones too, and keeps live members only where the store has them', async () => {
    const metrics = new PrometheusMetrics({ defaultMetrics: false })
    const query = parseQuery({})
    const plain = new MeasuredStoreFactory(new InMemoryStoreFactory(), metrics, 'memory').create('notes')
    expect(plain.watch).toBeUndefined()
    await plain.create([{ text: 'a' }], {})
    expect(await plain.find(query)).toHaveLength(1)
    expect(await plain.update(404, { text: 'b' }, query)).toBeNull()
    const failing: StoreFactory = {
      create: () =>
        ({ id: 'id', operators: [], find: () => Promise.reject(new Error('down')), watch: () => () => {} }) as never,
      close: async () => {},
      health: async () => ({ ready: true, checks: {}, problems: [] })
    }
    const live = new MeasuredStoreFactory(failing, metrics, 'fake').create('notes')
    expect(live.watch).toEqual(expect.any(Function))
    await expect(live.find(query)).rejects.toThrow('down')
    const scraped = await scrape(metrics)
    const count = (system: string, operation: string) =>
      valueOf(scraped, 'db_client_operation_duration_seconds_count', {
        db_system_name: system,
        db_collection_name: 'notes',
        db_operation_name: operation
      })
    expect([
      count('memory', 'create'),
      count('memory', 'find'),
      count('memory', 'update'),
      count('fake', 'find')
    ]).toEqual([1, 1, 1, 1])
  })

  it('labels failed calls by the Feathers error name, unexpected errors as GeneralError', () => {
    expect(errorOutcome(new NotFound('gone'))).toBe('NotFound')
    expect(errorOutcome(new TypeError('bug'))).toBe('GeneralError')
    expect(errorOutcome('a thrown string')).toBe('GeneralError')
  })
})
