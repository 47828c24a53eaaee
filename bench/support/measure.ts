import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export interface Measurement {
  opsPerSecond: number
  iterations: number
}

/** Runs `fn` repeatedly for about `seconds` after a short warm-up and reports operations per second. */
export async function measure(fn: () => unknown, { seconds = 2, warmup = 0.3 } = {}): Promise<Measurement> {
  const until = (limit: number) => performance.now() + limit * 1000
  for (const end = until(warmup); performance.now() < end;) await fn()
  let iterations = 0
  const start = performance.now()
  for (const end = until(seconds); performance.now() < end; iterations++) await fn()
  const elapsed = (performance.now() - start) / 1000
  return { opsPerSecond: iterations / elapsed, iterations }
}

type Row = Record<string, string | number>

export function printTable(title: string, rows: Row[]): void {
  console.log(`\n${title}`)
  const formatted = rows.map((row) =>
    Object.fromEntries(
      Object.entries(row).map(([key, value]) => [
        key,
        typeof value === 'number'
          ? key === 'ratio' || key.endsWith('ratio')
            ? `${value.toFixed(2)}×`
            : value.toFixed(value < 100 ? 1 : 0)
          : value
      ])
    )
  )
  console.table(formatted)
}

export function writeResults(name: string, rows: Row[]): void {
  const dir = join(process.cwd(), 'bench', 'results')
  mkdirSync(dir, { recursive: true })
  writeFileSync(
    join(dir, `${name}.json`),
    JSON.stringify({ date: new Date().toISOString(), node: process.version, rows }, null, 2)
  )
}

/** The median of `values` (the mean of the middle two for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** A JSON request the bench's set-up makes (sign-up, login): its parsed answer; a status of 300 or more throws. */
export async function jsonCall(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown
): Promise<unknown> {
  const response = await fetch(url + path, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000)
  })
  if (response.status >= 300)
    throw new Error(`${method} ${url}${path} answered ${response.status}: ${await response.text()}`)
  return response.json() as Promise<unknown>
}
