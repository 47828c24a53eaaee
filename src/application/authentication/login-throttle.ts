import { inject, injectable, optional } from 'inversify'
import { LoginAttempts, type AttemptRecord } from '../../domain/auth/login-attempts.js'
import { Clock } from '../../domain/clock.js'
import { NotAuthenticated, TooManyRequests } from '../../domain/errors/errors.js'
import { Metrics, noMetrics } from '../../domain/metrics.js'

/** The limits of login throttling; every one has a default. */
export interface LoginThrottleSettings {
  /** Failed logins per key within `window` before it is refused until the window ends (default 10; 0 turns throttling off). */
  maxFailures?: number
  /** Length of the counting window in ms (default 15 minutes). */
  window?: number
  /** Failures allowed with no wait; each one after that doubles the wait before the next attempt, from 1 s (default 3). Accounts only. */
  freeFailures?: number
  /**
   * Failed logins per client address within `window` (default 50): higher than per account, since
   * many people may share one address (an office, a mobile carrier); no growing delay.
   */
  addressMaxFailures?: number
}
export const LoginThrottleSettings = Symbol.for('LoginThrottleSettings')

/**
 * Limits failed logins per account (the submitted username, whether or not it exists) and per
 * client address, through a shared LoginAttempts store so every instance sees one count.
 *
 * An attempt is counted before the password is checked (so a burst of parallel attempts cannot slip
 * past the limit) and taken back when it succeeds; a correct login also resets the account's count.
 * A refused attempt is answered 429 without checking the password, the same for existing and unknown
 * accounts, with `data.retryAfter` in seconds (REST sends it as the `Retry-After` header).
 */
@injectable()
export class LoginThrottle {
  readonly maxFailures: number
  readonly window: number
  readonly freeFailures: number
  readonly addressMaxFailures: number

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
    const { attempts, clock } = this
    const names = [keys.account && `account:${keys.account}`, keys.address && `address:${keys.address}`].filter((key): key is string => !!key)
    const now = clock.now()
    const records = await Promise.all(names.map((key) => attempts.get(key)))
    this.refuseIfWaiting(names, records, now)
    const counted = await Promise.all(names.map((key) => attempts.add(key, now, this.window)))
    // Parallel attempts all passed the check above; only the first maxFailures of them go on.
    const over = counted.find((record, index) => record.count > this.limit(names[index]!))
    if (over) {
      await Promise.all(names.map((key) => attempts.subtract(key)))
      this.refuse(over.firstAt + this.window, now)
    }
    let result: T
    try {
      result = await login()
    } catch (error) {
      if (error instanceof NotAuthenticated) this.metrics.loginFailed()
      if (!(error instanceof NotAuthenticated)) await Promise.all(names.map((key) => attempts.subtract(key)))
      throw error
    }
    await Promise.all(names.map((key) => key.startsWith('account:') ? attempts.reset(key) : attempts.subtract(key)))
    return result
  }

  /** When the next attempt for this key's record is allowed (epoch ms). */
  allowedAt(key: string, record: AttemptRecord | undefined): number {
    if (!record) return -Infinity
    if (record.count >= this.limit(key)) return record.firstAt + this.window
    if (key.startsWith('address:') || record.count < this.freeFailures) return -Infinity
    return Math.min(record.lastAt + 1000 * 2 ** (record.count - this.freeFailures), record.firstAt + this.window)
  }

  private limit(key: string): number {
    return key.startsWith('address:') ? this.addressMaxFailures : this.maxFailures
  }

  private refuseIfWaiting(keys: string[], records: (AttemptRecord | undefined)[], now: number): void {
    const until = Math.max(...records.map((record, index) => record && record.firstAt + this.window > now ? this.allowedAt(keys[index]!, record) : -Infinity))
    if (until > now) this.refuse(until, now)
  }

  private refuse(until: number, now: number): never {
    const retryAfter = Math.max(1, Math.ceil((until - now) / 1000))
    this.metrics.loginThrottled()
    throw new TooManyRequests(`Too many failed logins; try again in ${retryAfter} s`, { retryAfter })
  }
}
