import type { Metric, Registry } from 'prom-client'
import { LabelChildren } from './label-children.js'

/** The counts of one label combination. */
export class HistogramSeries {
  /** Observations per bucket (not cumulative); the last slot is above the highest bound. */
  private readonly counts: Float64Array
  private sum = 0
  private count = 0

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly bounds: readonly number[]
  ) {
    this.counts = new Float64Array(bounds.length + 1)
  }

  observe(value: number): void {
    const { bounds } = this
    let index = 0
    while (index < bounds.length && value > bounds[index]!) index++
    this.counts[index]!++
    this.sum += value
    this.count++
  }

  /** The series as prom-client's registry writes a histogram: cumulative `_bucket`s, `+Inf`, `_sum`, `_count`. */
  values(name: string): { metricName: string; labels: Record<string, string | number>; value: number }[] {
    const values = []
    let cumulative = 0
    for (let index = 0; index < this.bounds.length; index++) {
      cumulative += this.counts[index]!
      values.push({
        metricName: `${name}_bucket`,
        labels: { ...this.labels, le: this.bounds[index]! },
        value: cumulative
      })
    }
    values.push({ metricName: `${name}_bucket`, labels: { ...this.labels, le: '+Inf' }, value: this.count })
    values.push({ metricName: `${name}_sum`, labels: { ...this.labels }, value: this.sum })
    values.push({ metricName: `${name}_count`, labels: { ...this.labels }, value: this.count })
    return values
  }
}

/**
 * A histogram for the request path, registered in a prom-client registry, which writes it like
 * its own. prom-client's Histogram builds a labels object and a key string on every observation
 * (about half a microsecond, and garbage); here an observation is a bucket search and three
 * additions on a series found by LabelChildren. The text format is prom-client's.
 */
export class FastHistogram {
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  private readonly series: HistogramSeries[] = []
  readonly children: LabelChildren<HistogramSeries>

  constructor(
    readonly name: string,
    readonly help: string,
    labelNames: readonly string[],
    bounds: readonly number[],
    registry: Registry
  ) {
    this.children = new LabelChildren((values) => {
      const series = new HistogramSeries(
        Object.fromEntries(labelNames.map((label, index) => [label, values[index]!])),
        bounds
      )
      this.series.push(series)
      return series
    })
    // The registry reads `name` and calls `get()`, the two members this shares with prom-client's metrics.
    registry.registerMetric(this as unknown as Metric)
  }

  get(): {
    name: string
    help: string
    type: string
    aggregator: string
    values: ReturnType<HistogramSeries['values']>
  } {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: this.series.flatMap((series) => series.values(this.name))
    }
  }
}

/** The count of one label combination. */
export class CounterSeries {
  value = 0

  constructor(readonly labels: Readonly<Record<string, string>>) {}

  inc(by = 1): void {
    this.value += by
  }
}

/**
 * A counter for the event path, registered like FastHistogram: prom-client's `counter.labels(…).inc()` hashes the
 * labels object on every increment; here an increment is one addition on a series found by LabelChildren.
 */
export class FastCounter {
  readonly type = 'counter'
  readonly aggregator = 'sum'
  private readonly series: CounterSeries[] = []
  readonly children: LabelChildren<CounterSeries>

  constructor(
    readonly name: string,
    readonly help: string,
    labelNames: readonly string[],
    registry: Registry
  ) {
    this.children = new LabelChildren((values) => {
      const series = new CounterSeries(Object.fromEntries(labelNames.map((label, index) => [label, values[index]!])))
      this.series.push(series)
      return series
    })
    registry.registerMetric(this as unknown as Metric)
  }

  get(): { name: string; help: string; type: string; aggregator: string; values: CounterSeries[] } {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.series }
  }
}
