/**
 * Reading settings from environment variables: each reader checks one variable and throws a
 * ConfigError whose one-line message names it. config.ts reads the core settings with these; an
 * adapter's module reads its own (e.g. src/infrastructure/rethinkdb/rethinkdb-settings.ts).
 */
export type Env = Record<string, string | undefined>

/** A bad setting: main.ts prints its message as the one line of a refused start. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError'
}

export function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got '${raw}')`)
  }
  return value
}

/** Undefined when unset or empty. */
export function optionalInteger(env: Env, name: string, min: number, max: number): number | undefined {
  return env[name] === undefined || env[name] === '' ? undefined : integer(env, name, min, min, max)
}

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
  y: 31_557_600_000
}
const DURATION = /^(\d+)\s*(ms|s|m|h|d|w|y)?$/

/** Whether `value` reads as a duration: a number with an optional unit. */
export function isDuration(value: string): boolean {
  return DURATION.test(value)
}

/** `15m`, `30d`, `3600s` in ms; a bare number is ms (as jsonwebtoken reads a string without unit). */
export function durationMs(value: string): number {
  const [, amount, unit = 'ms'] = DURATION.exec(value)!
  return Number(amount) * UNIT_MS[unit]!
}

/** A positive duration in ms (or zero too, when `zero` says what it turns off). */
export function duration(env: Env, name: string, fallback: string, zero?: string): number {
  const raw = env[name] || fallback
  if (!isDuration(raw) || durationMs(raw) < 0 || (durationMs(raw) === 0 && zero === undefined)) {
    const also = zero === undefined ? '' : `, or 0 (${zero})`
    throw new ConfigError(`${name} must be a duration such as 30d, 12h or 900s${also} (got '${raw}')`)
  }
  return durationMs(raw)
}

export function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false
  throw new ConfigError(`${name} must be true or false (got '${raw}')`)
}

export function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')} (got '${raw}')`)
  }
  return raw as T
}
