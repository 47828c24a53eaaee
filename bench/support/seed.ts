/** The records both servers start with: same data, so every workload compares like with like. */
export const SEED_COUNT = 1000

export function seedRecords(): Record<string, unknown>[] {
  return Array.from({ length: SEED_COUNT }, (_, i) => ({
    text: `message number ${i}`,
    user: `user${i % 20}`,
    room: i % 3 === 0 ? 'general' : 'random',
    stars: String(i % 50)
  }))
}

const CITIES = ['Rome', 'Paris', 'Berlin', 'Madrid', 'Lisbon', 'Vienna', 'Prague', 'Oslo', 'Dublin', 'Athens']

/** `count` deterministic people (a fixed-seed generator), for the query-engine benchmarks. */
export function peopleRecords(count: number): { id: number; name: string; age: number; city: string; score: number }[] {
  let seed = 42
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
  return Array.from({ length: count }, (_, id) => ({
    id,
    name: `user-${Math.floor(random() * 1e6).toString(36)}`,
    age: Math.floor(random() * 100),
    city: CITIES[Math.floor(random() * CITIES.length)]!,
    score: Math.round(random() * 1e4) / 100
  }))
}

export { peopleSchema } from '../../test/support/people-schema.js'

/** Started servers print this line with their port, then serve until killed. */
export function announce(port: number): void {
  process.stdout.write(`READY ${port}\n`)
}
