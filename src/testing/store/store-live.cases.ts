import type { StoreQuery } from '../../domain/query/ast.js'
import { parseQuery } from '../../domain/query/parse-query.js'
import type { Data, Id } from '../../domain/service/service.js'
import type { Store, StoreChange } from '../../domain/store/store.js'
import type { ContractTools } from '../contract.js'
import type { StoreContractOptions, StoreFixture } from './store.contract.js'

/** A listener that keeps what it hears; `next` awaits the first change not yet taken that matches. */
interface Listener {
  changes: StoreChange[]
  next(match: (change: StoreChange) => boolean): Promise<StoreChange>
  stop(): void
}

/**
 * The `live` group of the Store contract (store.contract.ts): the members the App uses for a live service
 * (src/application/service-events.ts). Its events are the store's changes instead of its own method events, so a
 * write publishes one change per record it wrote, named after the method, with the whole record, whoever wrote it;
 * `whenWatching` resolves before the App answers; `publish` carries `service.emit` to every watcher, once. Changes
 * reach a listener in the order their writes completed: once a last write's change has arrived, nothing earlier is
 * on its way. Each case has a collection of its own.
 */
export function liveCases(
  { group, test, beforeEach, afterEach, expect }: ContractTools,
  openStore: StoreContractOptions['open']
): void {
  const q = (raw: Record<string, unknown> = {}): StoreQuery => parseQuery(raw)
  const idOf = (record: Data | undefined): Id => record?.id as Id
  const opened: StoreFixture[] = []
  let collections = 0
  let collection = ''
  let markers = 0
  let store: Store

  /** A store over this case's collection: another process's view of it when opened a second time. */
  const open = async (): Promise<Store> => {
    const fixture = await openStore({ id: 'id', name: collection, watch: true })
    opened.push(fixture)
    return fixture.store
  }
  beforeEach(async () => {
    collection = `live_${++collections}`
    store = await open()
  })
  afterEach(async () => {
    for (const fixture of opened.splice(0)) await fixture.close?.()
  })

  /** Starts listening to `target` (this case's store by default), as the App does: watch, then whenWatching. */
  async function listen(target = store): Promise<Listener> {
    if (!target.watch) throw new Error('The store opened with watch: true has no watch()')
    const changes: StoreChange[] = []
    const taken = new Set<StoreChange>()
    const waiters: { match(change: StoreChange): boolean; resolve(change: StoreChange): void }[] = []
    const stop = target.watch((change) => {
      changes.push(change)
      const waiter = waiters.findIndex(({ match }) => match(change))
      if (waiter >= 0) {
        taken.add(change)
        waiters.splice(waiter, 1)[0]!.resolve(change)
      }
    })
    await target.whenWatching?.()
    const next = (match: (change: StoreChange) => boolean): Promise<StoreChange> => {
      const heard = changes.find((change) => !taken.has(change) && match(change))
      if (!heard) return new Promise((resolve) => waiters.push({ match, resolve }))
      taken.add(heard)
      return Promise.resolve(heard)
    }
    return { changes, next, stop }
  }

  const about =
    (event: string, name: string) =>
    (change: StoreChange): boolean =>
      change.event === event && change.record.name === name

  /**
   * Writes a marker record and waits until `listener` hears it: every change of an earlier write has then arrived.
   * Answers what it heard before the marker, as `{ event, record }` sorted by event and name.
   */
  async function settle(listener: Listener, writer = store): Promise<StoreChange[]> {
    const marker = `marker ${++markers}`
    await writer.create([{ name: marker }], q())
    await listener.next(about('created', marker))
    return listener.changes
      .filter((change) => change.record.name !== marker)
      .map(({ event, record }) => ({ event, record }))
      .sort((a, b) => `${a.event} ${String(a.record.name)}`.localeCompare(`${b.event} ${String(b.record.name)}`))
  }

  group('watch', () => {
    test('publishes one created change per record, with the whole record when the result is projected', async () => {
      const listener = await listen()
      const [ann, bob] = await store.create(
        [
          { name: 'Ann', age: 1 },
          { name: 'Bob', age: 2 }
        ],
        q({ $select: ['age'] })
      )
      expect(await settle(listener)).toEqual([
        { event: 'created', record: { id: idOf(ann), name: 'Ann', age: 1 } },
        { event: 'created', record: { id: idOf(bob), name: 'Bob', age: 2 } }
      ])
    })

    test('publishes updated for update, with the whole record when the result is projected', async () => {
      const listener = await listen()
      const [ann] = await store.create([{ name: 'Ann', age: 1 }], q())
      await store.update(idOf(ann), { name: 'Anna', age: 2 }, q({ $select: ['name'] }))
      expect(await settle(listener)).toEqual([
        { event: 'created', record: { id: idOf(ann), name: 'Ann', age: 1 } },
        { event: 'updated', record: { id: idOf(ann), name: 'Anna', age: 2 } }
      ])
    })

    test('publishes patched for patch, once per patched record, with the whole record', async () => {
      const listener = await listen()
      const [ann, bob, cid] = await store.create(
        [
          { name: 'Ann', team: 'a' },
          { name: 'Bob', team: 'a' },
          { name: 'Cid', team: 'b' }
        ],
        q()
      )
      await store.patch(null, { score: 1 }, q({ team: 'a', $select: ['id'] }))
      await store.patch(idOf(cid), { score: 2 }, q())
      const changes = await settle(listener)
      expect(changes.filter((change) => change.event !== 'created')).toEqual([
        { event: 'patched', record: { id: idOf(ann), name: 'Ann', team: 'a', score: 1 } },
        { event: 'patched', record: { id: idOf(bob), name: 'Bob', team: 'a', score: 1 } },
        { event: 'patched', record: { id: idOf(cid), name: 'Cid', team: 'b', score: 2 } }
      ])
    })

    test('publishes removed for remove, once per removed record, with the whole record', async () => {
      const listener = await listen()
      const created = await store.create([{ name: 'Ann' }, { name: 'Bob', age: 3 }, { name: 'Cid' }], q())
      await store.remove(null, q({ name: { $in: ['Ann', 'Bob'] }, $select: ['id'] }))
      await store.remove(idOf(created[2]), q())
      const changes = await settle(listener)
      expect(changes.filter((change) => change.event === 'removed')).toEqual(
        created.map((record) => ({ event: 'removed', record }))
      )
    })

    test('publishes nothing for a call that changes nothing', async () => {
      const listener = await listen()
      const [ann] = await store.create([{ name: 'Ann' }], q())
      await store.update(idOf(ann), { name: 'X' }, q({ name: 'Bob' }))
      await store.patch(null, { name: 'X' }, q({ name: 'Bob' }))
      await store.remove('not-an-id', q())
      await store.create([], q())
      expect(await settle(listener)).toEqual([{ event: 'created', record: ann }])
    })

    test('publishes records a listener may change without changing the store', async () => {
      const listener = await listen()
      const [ann] = await store.create([{ name: 'Ann', tags: ['x'] }], q())
      await settle(listener)
      const heard = listener.changes[0]!.record
      heard.name = 'Changed'
      ;(heard.tags as string[]).push('y')
      expect(await store.get(idOf(ann), q())).toEqual({ id: idOf(ann), name: 'Ann', tags: ['x'] })
    })

    test('stops publishing to a listener that unsubscribed, and goes on for the others', async () => {
      const gone = await listen()
      const stays = await listen()
      gone.stop()
      await store.create([{ name: 'Ann' }], q())
      await stays.next(about('created', 'Ann'))
      expect(gone.changes).toEqual([])
    })
  })

  group('whenWatching', () => {
    test('resolves, after which every change reaches the listeners; and resolves again', async () => {
      expect(store.whenWatching).toBeInstanceOf(Function)
      const listener = await listen()
      const [ann] = await store.create([{ name: 'Ann' }], q())
      expect((await listener.next(about('created', 'Ann'))).record).toEqual(ann)
      await expect(store.whenWatching!()).resolves.toBeUndefined()
    })
  })

  group('publish', () => {
    test('sends a custom event to every listener, once', async () => {
      const first = await listen()
      const second = await listen()
      await store.publish!('archived', { id: 'x', name: 'custom' })
      for (const listener of [first, second])
        expect(await listener.next(about('archived', 'custom'))).toMatchObject({
          event: 'archived',
          record: { id: 'x', name: 'custom' }
        })
      expect(await settle(first)).toEqual([{ event: 'archived', record: { id: 'x', name: 'custom' } }])
      expect(second.changes.filter((change) => change.event === 'archived')).toHaveLength(1)
    })
  })

  // Stores over one collection in several processes: each one's listeners hear every change and custom event.
  group('across processes', () => {
    test('publishes the writes made through another store over the collection', async () => {
      const other = await open()
      const listener = await listen()
      const [record] = await other.create([{ name: 'from other' }], q())
      expect((await listener.next(about('created', 'from other'))).record).toEqual(record)
      await other.patch(idOf(record), { name: 'patched by other' }, q())
      expect((await listener.next(about('patched', 'patched by other'))).record).toEqual({
        id: idOf(record),
        name: 'patched by other'
      })
    })

    test('sends a custom event to the listeners of another store over the collection', async () => {
      const other = await open()
      const listener = await listen(other)
      await store.publish!('archived', { id: 'x', name: 'custom' })
      expect((await listener.next(about('archived', 'custom'))).record).toEqual({ id: 'x', name: 'custom' })
      expect(await settle(listener)).toEqual([{ event: 'archived', record: { id: 'x', name: 'custom' } }])
    })
  })
}
