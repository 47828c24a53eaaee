/** One sample of the Prometheus text format: `name{label="value",…} value`. */
export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/** The parsed exposition: its samples, and the metric names its `# TYPE` lines declare. */
export interface Exposition {
  samples: Sample[]
  types: Map<string, string>
}

const SAMPLE = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/
const LABEL = /([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g

/** Parses the text format as prom-client writes it (no parser ships with it); throws on a line it cannot read. */
export function parseExposition(text: string): Exposition {
  const samples: Sample[] = []
  const types = new Map<string, string>()
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    const type = /^# TYPE (\S+) (\S+)$/.exec(line)
    if (type) types.set(type[1]!, type[2]!)
    if (line.startsWith('#')) continue
    const match = SAMPLE.exec(line)
    if (!match) throw new Error(`Not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const [, name, value] of (match[2] ?? '').matchAll(LABEL))
      labels[name!] = value!.replace(/\\(.)/g, (_all, c: string) => (c === 'n' ? '\n' : c))
    samples.push({ name: match[1]!, labels, value: Number(match[3]) })
  }
  return { samples, types }
}

/** The samples of `name` whose labels include `labels`. */
export function samplesOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): Sample[] {
  return exposition.samples.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value)
  )
}

/** The value of the one sample of `name` with exactly these labels; undefined when there is none. */
export function valueOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): number | undefined {
  const keys = Object.keys(labels).sort().join(',')
  const found = samplesOf(exposition, name, labels).filter(
    (sample) => Object.keys(sample.labels).sort().join(',') === keys
  )
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} with ${JSON.stringify(labels)}`)
  return found[0]?.value
}
