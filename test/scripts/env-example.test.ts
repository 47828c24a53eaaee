import { describe, expect, it } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { parseEnv } from 'node:util'
import { loadConfig } from '../../src/infrastructure/config/config.js'

/*
 * .env.example documents every variable of the Configuration table (docs/reference/configuration.md: set, or
 * commented out with its default), each value is one the server accepts, and .env itself is never committed.
 */
const example = readFileSync('.env.example', 'utf8')
const section = readFileSync('docs/reference/configuration.md', 'utf8')
const documented = [...section.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((match) => match[1]!)
/** `NAME=value` lines, and `# NAME=value` lines with the comment mark taken off. */
const uncommented = example
  .split('\n')
  .map((line) => line.replace(/^# (?=[A-Z][A-Z_]+=)/, ''))
  .join('\n')

describe('.env.example', () => {
  it('names every variable of the Configuration table, and no other', () => {
    const named = [...uncommented.matchAll(/^([A-Z][A-Z_]+)=/gm)].map((match) => match[1]!)
    expect(documented.length).toBeGreaterThan(20)
    expect([...named].sort()).toEqual([...documented].sort())
  })

  it('holds settings the server accepts, commented defaults included', () => {
    const set = parseEnv(example) as Record<string, string>
    expect(set.AUTH_SECRET!.length).toBeGreaterThanOrEqual(16)
    expect(() => loadConfig(set)).not.toThrow()
    expect(() => loadConfig(parseEnv(uncommented) as Record<string, string>)).not.toThrow()
  })

  it('is committed, and .env is git-ignored', () => {
    const ignored = (path: string) => {
      try {
        execFileSync('git', ['check-ignore', '--quiet', '--no-index', path])
        return true
      } catch {
        return false
      }
    }
    expect(ignored('.env')).toBe(true)
    expect(ignored('.env.example')).toBe(false)
  })
})
