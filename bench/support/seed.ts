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

/** Started servers print this line with their port, then serve until killed. */
export function announce(port: number): void {
  process.stdout.write(`READY ${port}\n`)
}
