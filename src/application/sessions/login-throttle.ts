import { inject, injectable, optional } from 'inversify'
import { LoginAttempts, type AttemptRecord } from '../../domain/auth/login-attempts.js'
import { Clock } from '../../domain/clock.js'
import { NotAuthenticated, TooManyRequests } from '../../domain/errors/errors.js'
import { Metrics, noMetrics } from '../../domain/metrics.js'
import type { LoginLimits } from '../authentication/session-ports.js'

/** The limits of login throttling; every one has a default. */
export interface LoginThrottleSettings {
  /**
   * Failed logins per key within `window` before it is refused until the window ends (default 10; 0 turns throttling
   * off).
   */
  maxFailures?: number
  /** Length of the counting window in ms (default 15 minutes). */
  window?: number
  /**
   * Failures allowed with no wait; each one after that doubles the wait before the next attempt, from 1 s (default 3).
   * Accounts only.
   */
  freeFailures?: number
  /**
   * Failed logins per client address within `window` (default 50): higher than per account, since
   * many people may share one address (an office, a mobile carrier); no growing delay.
   */
  addressMaxFailures?: number
}
export const LoginThrottleSettings = Symbol.for('LoginThrottleSettings')

/**
 * Attempts of one key that may wait for a running check; more at once are refused (they hold nothing but a connection).
 */
const MAX_WAITING = 1000

/** This process's password checks for one key, and the attempts waiting for one of them to end. */
interface Gate {
  /** Attempts between entering and leaving: the gate is forgotten when none is left. */
  holders: number
  running: number
  /** Failures this process has counted: a record read while one was being counted may lack it. */
  failures: number
  waiting: (() => void)[]
}

/**
 * Limits failed logins per account (the submitted username, whether or not it exists) and per
 * client address, through a shared LoginAttempts store so every instance sees one count.
 *
 * Only failures count: a login whose password is wrong (NotAuthenticated) adds one to every key, a
 * correct one resets the account's count, and any other error (the database is down: 503) counts
 * nothing. So that parallel guesses cannot all be checked before the first failure is counted, each
 * key lets at most `limit − failures so far` (at least one) checks run at once in this process; the
 * others wait in a queue and read the count again when a check ends — correct logins in a burst all
 * go through, a burst of wrong ones is refused once the count reaches the limit.
 * A refused attempt is answered 429 without checking the password, the same for existing and unknown
 * accounts, with `data.retryAfter` in seconds (REST sends it as the `Retry-After` header).
 */
@injectable()
export class LoginThrottle implements LoginLimits {
  readonly maxFailures: number
  readonly window: number
  readonly freeFailures: number
  readonly addressMaxFailures: number
  private readonly gates = new Map<string, Gate>()

  constructor(
    @inject(LoginAttempts) private readonly attempts: LoginAttempts,
    @inject(Clock) private readonly clock: Clock,
    @inject(LoginThrottleSettings) settings: LoginThrottleSettings = {},
    @inject(Metrics) @optional() private readonly metrics: Metrics = noMetrics
  ) {
    this.maxFailures = settings.maxFailures ?? 10
    this.window = settings.window ?? 15 * 60 * 1000
    this.freeFailures = settings.freeFailures ?? 3
    this.addressMaxFailures = settings.addressMaxFailures ?? 50
  }

  get enabled(): boolean {
    return this.maxFailures > 0
  }

  /** Runs `login` unless a key is throttled; counts it as a failure when it throws NotAuthenticated. */
  async guard<T>(keys: { account?: string; address?: string }, login: () => Promise<T>): Promise<T> {
    if (!this.enabled) return login()
    const names = [keys.account && `account:${keys.account}`, keys.address && `address:${keys.address}`].filter(
      (key): key is string => !!key
    )
    const gates = await this.enter(names)
    try {
      const result = await login()
      await Promise.all(names.filter((key) => key.startsWith('account:')).map((key) => this.attempts.reset(key)))
      return result
    } catch (error) {
      if (error instanceof NotAuthenticated) {
        this.metrics.loginFailed()
        await Promise.all(names.map((key) => this.attempts.add(key, this.clock.now(), this.window)))
        for (const gate of gates) gate.failures++
      }
      throw error
    } finally {
      for (const gate of gates) {
        gate.running--
        this.wake(gate)
      }
      this.release(names, gates)
    }
  }

  /** When the next attempt for this key's record is allowed (epoch ms). */
  allowedAt(key: string, record: AttemptRecord | undefined): number {
    if (!record) return -Infinity
    if (record.count >= this.limit(key)) return record.firstAt + this.window
    if (key.startsWith('address:') || record.count < this.freeFailures) return -Infinity
    return Math.min(record.lastAt + 1000 * 2 ** (record.count - this.freeFailures), record.firstAt + this.window)
  }

  /**
   * Waits for a check slot on every key, or throws 429 (throttled, or too many waiting) or the
   * store's error. Slots are taken synchronously after the last read, so no other attempt of this
   * process slips in between; a woken attempt that does not queue again on the same key wakes the next.
   */
  private async enter(names: string[]): Promise<Gate[]> {
    const gates = names.map((key) => this.hold(key))
    let woken: Gate | undefined
    try {
      for (;;) {
        const failures = gates.map((gate) => gate.failures)
        const records = await Promise.all(names.map((key) => this.attempts.get(key)))
        if (gates.some((gate, index) => gate.failures !== failures[index])) continue
        const now = this.clock.now()
        const current = records.map((record) => (record && record.firstAt + this.window > now ? record : undefined))
        this.refuseIfWaiting(names, current, now)
        const full = gates.find(
          (gate, index) => gate.running >= Math.max(1, this.limit(names[index]!) - (current[index]?.count ?? 0))
        )
        if (!full) {
          for (const gate of gates) gate.running++
          if (woken) this.wake(woken)
          return gates
        }
        if (full.waiting.length >= MAX_WAITING) {
          this.metrics.loginThrottled()
          throw new TooManyRequests('Too many logins at once; try again in 1 s', { retryAfter: 1 })
        }
        if (woken && woken !== full) this.wake(woken)
        await new Promise<void>((resolve) => full.waiting.push(resolve))
        woken = full
      }
    } catch (error) {
      if (woken) this.wake(woken)
      this.release(names, gates)
      throw error
    }
  }

  private hold(key: string): Gate {
    let gate = this.gates.get(key)
    if (!gate) this.gates.set(key, (gate = { holders: 0, running: 0, failures: 0, waiting: [] }))
    gate.holders++
    return gate
  }

  /** Lets go of the gates; one nobody holds any more (so nobody waits at) is forgotten. */
  private release(names: string[], gates: Gate[]): void {
    gates.forEach((gate, index) => {
      if (--gate.holders === 0) this.gates.delete(names[index]!)
    })
  }

  private wake(gate: Gate): void {
    gate.waiting.shift()?.()
  }

  private limit(key: string): number {
    return key.startsWith('address:') ? this.addressMaxFailures : this.maxFailures
  }

  private refuseIfWaiting(keys: string[], records: (AttemptRecord | undefined)[], now: number): void {
    const until = Math.max(...records.map((record, index) => this.allowedAt(keys[index]!, record)))
    if (until > now) this.refuse(until, now)
  }

  private refuse(until: number, now: number): never {
    const retryAfter = Math.max(1, Math.ceil((until - now) / 1000))
    this.metrics.loginThrottled()
    throw new TooManyRequests(`Too many failed logins; try again in ${retryAfter} s`, { retryAfter })
  }
}
