import type { LoginAttempts } from '../domain/auth/login-attempts.js'
import { defineContract } from './contract.js'

export interface LoginAttemptsContractOptions {
  /** Counters of their own for each case: empty, and not seen by the other cases. */
  open(): LoginAttempts | Promise<LoginAttempts>
}

const NOW = Date.UTC(2026, 0, 1)

/** The LoginAttempts contract: counting within a window, a new window after it, reset, and simultaneous attempts. */
export const runLoginAttemptsContract = defineContract<LoginAttemptsContractOptions>(
  'LoginAttempts',
  ({ test, expect }, options) => {
    test('counts within a window, starts a new one after it, and resets', async () => {
      const attempts = await options.open()
      expect(await attempts.get('account:a@x.io')).toBeUndefined()
      expect(await attempts.add('account:a@x.io', NOW, 1000)).toEqual({ count: 1, firstAt: NOW, lastAt: NOW })
      expect(await attempts.add('account:a@x.io', NOW + 10, 1000)).toEqual({ count: 2, firstAt: NOW, lastAt: NOW + 10 })
      expect(await attempts.add('account:a@x.io', NOW + 1000, 1000)).toEqual({
        count: 1,
        firstAt: NOW + 1000,
        lastAt: NOW + 1000
      })
      await attempts.reset('account:a@x.io')
      expect(await attempts.get('account:a@x.io')).toBeUndefined()
    })

    test('counts all of 30 simultaneous attempts', async () => {
      const attempts = await options.open()
      const counts = await Promise.all(
        Array.from({ length: 30 }, () => attempts.add(`address:${'1'.repeat(200)}`, NOW, 60_000))
      )
      expect(counts.map((entry) => entry.count).sort((x, y) => x - y)).toEqual(
        Array.from({ length: 30 }, (_, i) => i + 1)
      )
    })
  }
)
