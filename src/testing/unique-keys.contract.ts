import { App } from '../application/app.js'
import { uniqueField } from '../application/schema/unique-field.js'
import { Conflict, NotFound, type FeathersError } from '../domain/errors/errors.js'
import type { Data, Id } from '../domain/service/service.js'
import type { UniqueKeys } from '../domain/unique-keys.js'
import { defineContract } from './contract.js'

export interface UniqueKeysContractOptions {
  /**
   * Keys of their own for each case: none claimed, and not seen by the other cases. With `shared`, every call
   * with that name opens the same keys again, through a connection of its own: another process over the same
   * database (an adapter of one process, like memory, returns the same object).
   */
  open(shared?: string): UniqueKeys | Promise<UniqueKeys>
}

/** A service over a fixed list of records: what the back-fill reads (`find` answers all of them). */
class People {
  readonly id = 'id'
  private next = 1000

  constructor(
    private readonly records: Data[],
    /** Records `get` finds that `find` did not list: written by another instance after the read. */
    private readonly later: Data[] = []
  ) {}

  async find(): Promise<Data[]> {
    return this.records
  }

  async get(id: Id): Promise<Data> {
    const record = [...this.records, ...this.later].find((item) => item.id === id)
    if (!record) throw new NotFound(`No record found for id '${id}'`)
    return record
  }

  async create(data: Data): Promise<Data> {
    const record = { ...data, id: this.next++ }
    this.records.push(record)
    return record
  }
}

/** An app with `people` over `records`, its `email` unique through `keys` (not set up yet). */
function appOver(keys: UniqueKeys, people: People): App {
  const app = new App()
  const email = uniqueField('email', { keys })
  app.use('people', people)
  app.service('people').hooks({
    before: { create: [email.before] },
    after: { create: [email.after] },
    error: { all: [email.error] }
  })
  return app
}

const someone = (id: Id, email: string): Data => ({ id, email, name: `person ${id}` })

/**
 * The UniqueKeys contract: one winner among simultaneous claims, scopes, release, holders and long values; and
 * uniqueField's back-fill over the adapter: keys of existing records claimed at startup (also by several
 * instances at once), duplicates refused by name, keys of earlier versions and stale keys taken over.
 */
export const runUniqueKeysContract = defineContract<UniqueKeysContractOptions>(
  'UniqueKeys',
  ({ group, test, expect }, options) => {
    let shared = 0
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

    test('records the holder a claim names at once, and keeps the first when a second claim loses', async () => {
      const keys = await options.open()
      expect(await keys.claim('users.email', 'first@x.io', 'id-1')).toBe(true)
      expect(await keys.claim('users.email', 'first@x.io', 'id-2')).toBe(false)
      expect(await keys.holder('users.email', 'first@x.io')).toBe('id-1')
    })

    group('back-fill', () => {
      test('claims the key of every record when the app is set up, and a new write then collides', async () => {
        const keys = await options.open()
        const records = Array.from({ length: 80 }, (_, i) =>
          someone(i + 1, i % 2 ? `Person-${i}@X.io` : `person-${i}@x.io`)
        )
        const app = appOver(keys, new People(records))
        await app.setup()
        for (const [i, record] of records.entries())
          expect(await keys.holder('people.email', `person-${i}@x.io`)).toBe(record.id)
        await expect(app.service('people').create({ email: ' PERSON-7@x.io' })).rejects.toBeInstanceOf(Conflict)
        await expect(app.service('people').create({ email: 'new@x.io' })).resolves.toMatchObject({ id: 1000 })
        // A second start (every start back-fills) finds every key held by its record.
        await expect(appOver(keys, new People(records)).setup()).resolves.toBeUndefined()
      })

      test('lets several instances over one database back-fill the same records at once', async () => {
        const name = `backfill_${++shared}`
        const records = Array.from({ length: 60 }, (_, i) => someone(`id-${i}`, `p${i}@x.io`))
        const instances = await Promise.all(Array.from({ length: 4 }, () => options.open(name)))
        await Promise.all(instances.map((keys) => appOver(keys, new People(records)).setup()))
        for (const [i, keys] of instances.entries())
          expect(await keys.holder('people.email', `p${i * 7}@x.io`)).toBe(`id-${i * 7}`)
        expect(await instances[0]!.claim('people.email', 'p59@x.io')).toBe(false)
      })

      test('refuses to start when records share a value, naming the field, each value and its ids', async () => {
        const keys = await options.open()
        const records = [
          someone(1, 'ann@x.io'),
          someone(2, 'bob@x.io'),
          someone(3, ' Ann@X.io'),
          someone(4, 'BOB@x.io'),
          someone(5, 'bob@x.io '),
          someone(6, 'cy@x.io')
        ]
        const setup = appOver(keys, new People(records)).setup()
        await expect(setup).rejects.toBeInstanceOf(Conflict)
        const error = (await setup.catch((caught: unknown) => caught)) as FeathersError
        expect(error.message).toMatch(/'email' of 'people' is unique/)
        expect(error.message).toMatch(/'ann@x\.io' \(ids 1, 3\); 'bob@x\.io' \(ids 2, 4, 5\)/)
        expect(error.data).toEqual({
          field: 'email',
          duplicates: [
            { value: 'ann@x.io', ids: [1, 3] },
            { value: 'bob@x.io', ids: [2, 4, 5] }
          ]
        })
      })

      test('refuses a record whose key another record got after the read, if that record still has it', async () => {
        const keys = await options.open()
        expect(await keys.claim('people.email', 'late@x.io', 2)).toBe(true)
        const people = new People([someone(1, 'Late@x.io')], [someone(2, 'late@x.io')])
        await expect(appOver(keys, people).setup()).rejects.toMatchObject({
          code: 409,
          data: { field: 'email', duplicates: [{ value: 'late@x.io', ids: [1, 2] }] }
        })
      })

      test('gives a key claimed without a holder, or held by a record without the value, to its record', async () => {
        const keys = await options.open()
        // An earlier version claimed without holders; record 9 was removed, and 8 changed, in the database.
        expect(await keys.claim('people.email', 'old@x.io')).toBe(true)
        expect(await keys.claim('people.email', 'gone@x.io', 9)).toBe(true)
        expect(await keys.claim('people.email', 'moved@x.io', 8)).toBe(true)
        const people = new People(
          [someone(1, 'old@x.io'), someone(2, 'gone@x.io'), someone(3, 'moved@x.io')],
          [someone(8, 'elsewhere@x.io')]
        )
        await appOver(keys, people).setup()
        expect(await keys.holder('people.email', 'old@x.io')).toBe(1)
        expect(await keys.holder('people.email', 'gone@x.io')).toBe(2)
        expect(await keys.holder('people.email', 'moved@x.io')).toBe(3)
      })
    })
  }
)
