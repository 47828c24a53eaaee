type Key = string | number
type Level<C> = Map<Key, Level<C> | C>

/**
 * The children of one metric (prom-client's `metric.labels(…)`), kept by their label values in
 * nested maps: a hot path finds its child with one lookup per label, without building a labels
 * object or a key string. Label values are bounded by the callers (see src/domain/metrics.ts).
 */
export class LabelChildren<C> {
  private readonly root: Level<C> = new Map()

  constructor(private readonly create: (values: string[]) => C) {}

  get1(a: Key): C {
    return (this.root.get(a) as C | undefined) ?? this.add([a])
  }

  get2(a: Key, b: Key): C {
    return (this.level(this.root, a).get(b) as C | undefined) ?? this.add([a, b])
  }

  get3(a: Key, b: Key, c: Key): C {
    return (this.level(this.level(this.root, a), b).get(c) as C | undefined) ?? this.add([a, b, c])
  }

  get4(a: Key, b: Key, c: Key, d: Key): C {
    return (this.level(this.level(this.level(this.root, a), b), c).get(d) as C | undefined) ?? this.add([a, b, c, d])
  }

  private level(parent: Level<C>, key: Key): Level<C> {
    let level = parent.get(key) as Level<C> | undefined
    if (!level) parent.set(key, (level = new Map()))
    return level
  }

  private add(values: Key[]): C {
    const child = this.create(values.map(String))
    let level = this.root
    for (const value of values.slice(0, -1)) level = this.level(level, value)
    level.set(values[values.length - 1]!, child)
    return child
  }
}
