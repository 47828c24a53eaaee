import { Unprocessable } from '../domain/errors/errors.js'
import { parseQuery } from '../domain/query/parse-query.js'
import type { Data, Params } from '../domain/service/service.js'
import type { KeyedWrite } from '../domain/store/keyed-write.js'
import type { Store, StoreChange } from '../domain/store/store.js'
import { defineContract } from './contract.js'
import type { StoreFixture, StoreRequest } from './store/store.contract.js'

export interface KeyedWritesContractOptions {
  /**
   * Opens a store that honours idempotency keys (`keyedWrites`), over the collection `name`. A case may open one
   * name twice: two stores over one collection, as two processes would have (an adapter of one process, like
   * memory, returns the same store).
   */
  open(request: StoreRequest): Promise<StoreFixture>
}

const ALL = parseQuery({})
const NO_SELECT = {}

/** A keyed write as the idempotency module makes it: a fresh object per call (the store marks it). */
export function makeKeyedWrite(scoped: string, fingerprint = 'request-1', retentionMs = 60_000): KeyedWrite {
  return { scoped: () => scoped, fingerprint, retentionMs, waitMs: 2_000 }
}

const keyed = (write: KeyedWrite): Params => ({ idempotency: write })

/**
 * The idempotency-key capability of a store (`Store.keyedWrites`): a repeat of a key within its retention answers
 * the first write's answer without writing (and without an event), the same key with another request is a 422,
 * of concurrent repeats — in one process or two — exactly one writes, a write that fails keeps no key, keys are
 * apart by scope, and keys past their retention are written anew and swept. Groups: `once`, `concurrent`,
 * `refusals`, `retention`, `events` (stores that publish their changes), `across processes`.
 */
export const runKeyedWritesContract = defineContract<KeyedWritesContractOptions>('KeyedWrites', (tools, options) => {
  const { group, test, afterEach, expect } = tools
  // Keys of this run only: a database kept between runs holds the keys of the last one.
  const run = Math.random().toString(36).slice(2, 10)
  const keyedWrite = (scoped: string, fingerprint?: string, retentionMs?: number) =>
    makeKeyedWrite(`${run} ${scoped}`, fingerprint, retentionMs)
  let opened: StoreFixture[] = []
  let names = 0
  const open = async (name = `keyed_${++names}`, watch = false): Promise<Store> => {
    const fixture = await options.open({ id: 'id', name, watch })
    opened.push(fixture)
    expect(fixture.store.keyedWrites).toBeDefined()
    return fixture.store
  }
  afterEach(async () => {
    for (const fixture of opened) await fixture.close?.()
    opened = []
  })
  const count = async (store: Store) => (await store.find(ALL)).length

  group('once', () => {
    test('writes a keyed create once and answers a repeat with the first answer', async () => {
      const store = await open()
      const first = keyedWrite('user-1 messages create k1')
      const [created] = await store.create([{ text: 'hi' }], NO_SELECT, keyed(first))
      expect(first).toMatchObject({ handled: true })
      expect(first.replayed).toBeFalsy()
      const again = keyedWrite('user-1 messages create k1')
      expect(await store.create([{ text: 'hi' }], NO_SELECT, keyed(again))).toEqual([created])
      expect(again).toMatchObject({ handled: true, replayed: true })
      expect(await count(store)).toBe(1)
    })

    test('writes a keyed patch, update and remove once each', async () => {
      const store = await open()
      const [record] = await store.create([{ id: 'r1', n: 1 }], NO_SELECT)
      const patch = () => store.patch('r1', { n: 2, note: 'patched' }, ALL, keyed(keyedWrite('u patch p1')))
      expect(await patch()).toEqual([{ id: 'r1', n: 2, note: 'patched' }])
      // A later write by someone else: the repeat must not undo it, and answers what the first one answered.
      await store.patch('r1', { n: 3 }, ALL)
      expect(await patch()).toEqual([{ id: 'r1', n: 2, note: 'patched' }])
      expect(await store.get('r1', ALL)).toMatchObject({ n: 3 })
      const update = () => store.update('r1', { n: 10 }, ALL, keyed(keyedWrite('u update p1')))
      expect(await update()).toEqual({ id: 'r1', n: 10 })
      await store.patch('r1', { n: 11 }, ALL)
      expect(await update()).toEqual({ id: 'r1', n: 10 })
      expect(await store.get('r1', ALL)).toEqual({ id: 'r1', n: 11 })
      const remove = () => store.remove('r1', ALL, keyed(keyedWrite('u remove p1')))
      expect(await remove()).toEqual([{ id: 'r1', n: 11 }])
      await store.create([{ ...record, n: 0 }], NO_SELECT)
      // The repeat answers the removed record again and leaves the new one alone.
      expect(await remove()).toEqual([{ id: 'r1', n: 11 }])
      expect(await store.get('r1', ALL)).toEqual({ id: 'r1', n: 0 })
    })

    test('keeps scopes apart: another caller, path or method with the same key writes', async () => {
      const store = await open()
      for (const scoped of ['alice messages create k', 'bob messages create k', 'alice messages patch k'])
        await store.create([{ text: scoped }], NO_SELECT, keyed(keyedWrite(scoped)))
      expect(await count(store)).toBe(3)
    })

    test('has the answer of a keyed write as soon as the write committed, for that request only', async () => {
      // What a repeat is answered from must exist with the write: a process killed between the commit and the reply
      // (here: the write returned, and nothing else ran for it) leaves the key with its answer, never the key alone.
      const store = await open()
      const write = keyedWrite('u kept k', 'print')
      expect(await store.keyedWrites!.answer(write)).toBeUndefined()
      const created = await store.create([{ id: 'kept', n: 1 }], NO_SELECT, keyed(write))
      const patched = await store.patch('kept', { n: 2 }, ALL, keyed(keyedWrite('u kept p', 'print')))
      expect(await store.keyedWrites!.answer(keyedWrite('u kept k', 'print'))).toEqual({ result: created })
      expect(await store.keyedWrites!.answer(keyedWrite('u kept p', 'print'))).toEqual({ result: patched })
      // A later write leaves the stored answers as the writes answered them.
      await store.patch('kept', { n: 3 }, ALL)
      expect(await store.keyedWrites!.answer(keyedWrite('u kept p', 'print'))).toEqual({ result: patched })
      await expect(store.keyedWrites!.answer(keyedWrite('u kept k', 'other'))).rejects.toBeInstanceOf(Unprocessable)
      expect(await store.keyedWrites!.answer(keyedWrite('u kept nothing', 'print'))).toBeUndefined()
    })

    test('is honoured only by the store it targets', async () => {
      const [mine, other] = [await open(), await open()]
      const write = { ...keyedWrite('u target k'), target: mine.keyedWrites }
      await other.create([{ text: 'a' }], NO_SELECT, keyed(write))
      await other.create([{ text: 'a' }], NO_SELECT, keyed({ ...keyedWrite('u target k'), target: mine.keyedWrites }))
      expect(write.handled).toBeFalsy()
      expect(await count(other)).toBe(2)
    })

    test('changes nothing without a key', async () => {
      const store = await open()
      await store.create([{ text: 'a' }], NO_SELECT)
      await store.create([{ text: 'a' }], NO_SELECT, {})
      expect(await count(store)).toBe(2)
    })
  })

  group('concurrent', () => {
    test('makes exactly one write of 20 concurrent repeats, and gives all of them its answer', async () => {
      const store = await open()
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => store.create([{ text: 'race' }], NO_SELECT, keyed(keyedWrite('u c race'))))
      )
      expect(await count(store)).toBe(1)
      for (const answer of answers) expect(answer).toEqual(answers[0])
    })

    test('makes one write of 10 concurrent repeats of a keyed remove of one record: each gets the removed record', async () => {
      const store = await open()
      await store.create([{ id: 'gone', n: 1 }], NO_SELECT)
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => store.remove('gone', ALL, keyed(keyedWrite('u c remove'))))
      )
      // Unkeyed, nine of them would have found nothing to remove.
      for (const answer of answers) expect(answer).toEqual([{ id: 'gone', n: 1 }])
      expect(await count(store)).toBe(0)
    })
  })

  group('refusals', () => {
    test('refuses the same key with another request (422) and writes nothing for it', async () => {
      const store = await open()
      await store.create([{ text: 'one' }], NO_SELECT, keyed(keyedWrite('u m k', 'print-a')))
      const other = store.create([{ text: 'two' }], NO_SELECT, keyed(keyedWrite('u m k', 'print-b')))
      await expect(other).rejects.toBeInstanceOf(Unprocessable)
      expect(await count(store)).toBe(1)
    })

    test('keeps no key for a write that failed: a retry writes', async () => {
      const store = await open()
      await store.create([{ id: 'taken' }], NO_SELECT)
      const attempt = () => store.create([{ id: 'taken', text: 'mine' }], NO_SELECT, keyed(keyedWrite('u m fail')))
      await expect(attempt()).rejects.toMatchObject({ code: 409 })
      await store.remove('taken', ALL)
      expect(await attempt()).toEqual([{ id: 'taken', text: 'mine' }])
      expect(await attempt()).toEqual([{ id: 'taken', text: 'mine' }])
      expect(await count(store)).toBe(1)
    })
  })

  group('retention', () => {
    test('writes a key again past its retention, and sweeps expired keys', async () => {
      const store = await open()
      await store.create([{ text: 'a' }], NO_SELECT, keyed(keyedWrite('u m short', 'p', 200)))
      await store.create([{ text: 'a' }], NO_SELECT, keyed(keyedWrite('u m short', 'p', 200)))
      expect(await count(store)).toBe(1)
      await new Promise((resolve) => setTimeout(resolve, 400))
      expect(await store.keyedWrites!.sweep()).toBeGreaterThanOrEqual(1)
      const late = keyedWrite('u m short', 'p', 200)
      await store.create([{ text: 'a' }], NO_SELECT, keyed(late))
      expect(late.replayed).toBeFalsy()
      expect(await count(store)).toBe(2)
    })
  })

  group('events', () => {
    test('publishes one event for a write and none for its repeats', async () => {
      const store = await open(undefined, true)
      const events: StoreChange[] = []
      const unwatch = store.watch!((change) => events.push(change))
      try {
        await store.whenWatching?.()
        await store.create([{ id: 'e1' }], NO_SELECT, keyed(keyedWrite('u e k')))
        await store.create([{ id: 'e1' }], NO_SELECT, keyed(keyedWrite('u e k')))
        await store.create([{ id: 'e2' }], NO_SELECT)
        // e2's event comes after e1's: once it is here, e1's repeat would have been too.
        for (let tries = 0; tries < 100 && !events.some((event) => event.record.id === 'e2'); tries++)
          await new Promise((resolve) => setTimeout(resolve, 20))
        expect(events.map((event) => `${event.event} ${String(event.record.id)}`)).toEqual(['created e1', 'created e2'])
      } finally {
        unwatch()
      }
    })
  })

  group('across processes', () => {
    test('makes one write of repeats sent at once through two stores over one collection', async () => {
      const name = `keyed_${++names}`
      const [a, b] = [await open(name), await open(name)]
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, n) =>
          (n % 2 ? a : b).create([{ text: 'both' }], NO_SELECT, keyed(keyedWrite('u x both')))
        )
      )
      expect(await count(a)).toBe(1)
      for (const answer of answers) expect(answer).toEqual(answers[0] as Data[])
    })
  })
})
