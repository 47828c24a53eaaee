import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The version in package.json, found from this file (src/ under jest, dist/ when built). */
export function packageVersion(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json')
    if (existsSync(file))
      return String((JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown }).version ?? 'unknown')
  }
  return 'unknown'
}
