import type { UniqueKeys } from '../domain/unique-keys.js'
import { defineContract } from './contract.js'

export interface UniqueKeysContractOptions {
  /** Keys of their own for each case: none claimed, and not seen by the other cases. */
  open(): UniqueKeys | Promise<UniqueKeys>
}

/** The UniqueKeys contract: one winner among simultaneous claims, scopes, release, holders and long values. */
export const runUniqueKeysContract = defineContract<UniqueKeysContractOptions>(
  'UniqueKeys',
  ({ test, expect }, options) => {
    test('lets exactly one of 100 simultaneous claims of one key win', async () => {
      const keys = await options.open()
      const results = await Promise.all(Array.from({ length: 100 }, () => keys.claim('users.email', 'race@x.io')))
      expect(results.filter(Boolean)).toHaveLength(1)
    })

    test('keeps scopes apart, frees a released key, and releases unknown keys quietly', async () => {
      const keys = await options.open()
      expect(await keys.claim('users.email', 'a@x.io')).toBe(true)
      expect(await keys.claim('users.email', 'a@x.io')).toBe(false)
      expect(await keys.claim('teams.email', 'a@x.io')).toBe(true)
      await keys.release('users.email', 'a@x.io')
      await keys.release('users.email', 'never@x.io')
      expect(await keys.claim('users.email', 'a@x.io')).toBe(true)
    })

    test('remembers the id holding a claimed key until it is released', async () => {
      const keys = await options.open()
      // Not claimed: nothing to assign.
      await keys.assign('users.email', 'held@x.io', 7)
      expect(await keys.holder('users.email', 'held@x.io')).toBeUndefined()
      expect(await keys.claim('users.email', 'held@x.io')).toBe(true)
      expect(await keys.holder('users.email', 'held@x.io')).toBeUndefined()
      await keys.assign('users.email', 'held@x.io', 7)
      expect(await keys.holder('users.email', 'held@x.io')).toBe(7)
      await keys.assign('users.email', 'held@x.io', 'a-uuid')
      expect(await keys.holder('users.email', 'held@x.io')).toBe('a-uuid')
      expect(await keys.holder('teams.email', 'held@x.io')).toBeUndefined()
      await keys.release('users.email', 'held@x.io')
      expect(await keys.holder('users.email', 'held@x.io')).toBeUndefined()
    })

    test('takes values longer than a RethinkDB primary key (a 254-character email)', async () => {
      const keys = await options.open()
      const long = `${'l'.repeat(245)}@long.io`
      expect(await keys.claim('users.email', long)).toBe(true)
      expect(await keys.claim('users.email', long)).toBe(false)
      expect(await keys.claim('users.email', `${long}x`)).toBe(true)
    })
  }
)
