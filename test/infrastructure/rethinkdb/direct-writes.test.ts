import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals'
import type { Data } from '../../../src/domain/service/service.js'
import type { StoreChange } from '../../../src/domain/store/store.js'
import { DirectWrites } from '../../../src/infrastructure/rethinkdb/direct-writes.js'

const DELAY = 20
/** Moves the (fake) clock past the delay: every change waiting for its logged event has had its chance. */
const settle = () => jest.advanceTimersByTime(DELAY * 3)

beforeEach(() => {
  jest.useFakeTimers()
})
afterEach(() => {
  jest.useRealTimers()
})

function harness() {
  const published: StoreChange<Data>[] = []
  let logLive = true
  const direct = new DirectWrites({
    idField: 'id',
    delayMs: DELAY,
    logCaughtUp: () => logLive,
    publish: (change) => {
      published.push(change)
    }
  })
  return {
    direct,
    published,
    setLogLive: (live: boolean) => {
      logLive = live
    }
  }
}

describe('DirectWrites', () => {
  it('publishes a table change nobody logged as created, patched or removed, after the delay', () => {
    const { direct, published } = harness()
    direct.changed({ type: 'add', old_val: null, new_val: { id: 'a', n: 1 } })
    direct.changed({ type: 'change', old_val: { id: 'a', n: 1 }, new_val: { id: 'a', n: 2 } })
    direct.changed({ type: 'remove', old_val: { id: 'a', n: 2 }, new_val: null })
    expect(published).toEqual([])
    settle()
    expect(published).toEqual([
      { event: 'created', record: { id: 'a', n: 1 } },
      { event: 'patched', record: { id: 'a', n: 2 } },
      { event: 'removed', record: { id: 'a', n: 2 } }
    ])
  })

  it('drops a table change whose event was logged before it arrived', () => {
    const { direct, published } = harness()
    direct.logged('updated', { id: 1, text: 'x' })
    direct.changed({ type: 'change', old_val: { id: 1, text: 'w' }, new_val: { text: 'x', id: 1 } })
    direct.logged('removed', { id: 1, text: 'x' })
    direct.changed({ type: 'remove', old_val: { id: 1, text: 'x' }, new_val: null })
    settle()
    expect(published).toEqual([])
  })

  it('matches a squashed table change (several logged writes of one record) to the event of its last value', () => {
    // The table feed is squashed: a create and a patch of one record within a batch come as one `add`.
    const { direct, published } = harness()
    direct.logged('created', { id: 'a', n: 1 })
    direct.logged('patched', { id: 'a', n: 2 })
    direct.changed({ type: 'add', old_val: null, new_val: { id: 'a', n: 2 } })
    direct.changed({ type: 'add', old_val: null, new_val: { id: 'b', n: 2 } })
    direct.logged('created', { id: 'b', n: 1 })
    direct.logged('patched', { id: 'b', n: 2 })
    settle()
    expect(published).toEqual([])
  })

  it('drops a table change whose event is logged while it waits', () => {
    const { direct, published } = harness()
    direct.changed({ type: 'add', old_val: null, new_val: { id: 2, nested: { b: 1, a: 2 } } })
    direct.logged('created', { id: 2, nested: { a: 2, b: 1 } })
    settle()
    expect(published).toEqual([])
  })

  it('tells apart the same id with other values, and the numeric id 0 from the string "0"', () => {
    const { direct, published } = harness()
    direct.logged('patched', { id: 0, n: 1 })
    direct.changed({ type: 'change', old_val: { id: '0', n: 0 }, new_val: { id: '0', n: 1 } })
    direct.changed({ type: 'change', old_val: { id: 0, n: 0 }, new_val: { id: 0, n: 2 } })
    settle()
    expect(published).toEqual([
      { event: 'patched', record: { id: '0', n: 1 } },
      { event: 'patched', record: { id: 0, n: 2 } }
    ])
  })

  it('waits longer while the log runs late: twice the longest a store write lately waited for its logged event', () => {
    const { direct, published } = harness()
    // A store's write whose logged event came 15 ms after its table change (the delay is 20 ms).
    direct.changed({ type: 'change', old_val: { id: 's', n: 0 }, new_val: { id: 's', n: 1 } })
    jest.advanceTimersByTime(15)
    direct.logged('patched', { id: 's', n: 1 })
    // A direct write now waits 30 ms, not 20: a late log row still comes in time.
    direct.changed({ type: 'change', old_val: { id: 'd', n: 0 }, new_val: { id: 'd', n: 1 } })
    jest.advanceTimersByTime(25)
    expect(published).toEqual([])
    jest.advanceTimersByTime(6)
    expect(published).toEqual([{ event: 'patched', record: { id: 'd', n: 1 } }])
    // Ten minutes later the lag is forgotten (it halves every minute): the delay again.
    jest.advanceTimersByTime(600_000)
    direct.changed({ type: 'change', old_val: { id: 'e', n: 0 }, new_val: { id: 'e', n: 1 } })
    jest.advanceTimersByTime(DELAY + 1)
    expect(published).toHaveLength(2)
  })

  it('counts repeated identical changes one for one', () => {
    const { direct, published } = harness()
    direct.logged('patched', { id: 'r', v: 'A' })
    direct.changed({ type: 'change', old_val: { id: 'r', v: 'B' }, new_val: { id: 'r', v: 'A' } })
    direct.changed({ type: 'change', old_val: { id: 'r', v: 'B' }, new_val: { id: 'r', v: 'A' } })
    settle()
    expect(published).toEqual([{ event: 'patched', record: { id: 'r', v: 'A' } }])
  })

  it('waits while the event log is not live, so a replay can still account for a change', () => {
    const { direct, published, setLogLive } = harness()
    setLogLive(false)
    direct.changed({ type: 'add', old_val: null, new_val: { id: 'late' } })
    direct.changed({ type: 'add', old_val: null, new_val: { id: 'direct' } })
    settle()
    expect(published).toEqual([])
    direct.logged('created', { id: 'late' })
    setLogLive(true)
    settle()
    expect(published).toEqual([{ event: 'created', record: { id: 'direct' } }])
  })

  it('publishes only once the log has handed out every event numbered when the delay was over', async () => {
    // The log's feed may run later than the delay (a busy server) while live and holding nothing back.
    const answers: ((settled: boolean) => void)[] = []
    const published: StoreChange<Data>[] = []
    const direct = new DirectWrites({
      idField: 'id',
      delayMs: DELAY,
      logCaughtUp: () => true,
      logSettled: () => new Promise((resolve) => answers.push(resolve)),
      publish: (change) => {
        published.push(change)
      }
    })
    direct.changed({ type: 'add', old_val: null, new_val: { id: 'late', n: 1 } })
    direct.changed({ type: 'add', old_val: null, new_val: { id: 'direct', n: 1 } })
    await jest.advanceTimersByTimeAsync(DELAY * 3)
    expect(answers).toHaveLength(1)
    answers[0]!(false)
    await jest.advanceTimersByTimeAsync(0)
    expect(published).toEqual([])
    // The late event comes; the next question is answered: only the change nobody logged is published.
    direct.logged('created', { id: 'late', n: 1 })
    await jest.advanceTimersByTimeAsync(DELAY * 3)
    expect(answers).toHaveLength(2)
    answers[1]!(true)
    await jest.advanceTimersByTimeAsync(0)
    expect(published).toEqual([{ event: 'created', record: { id: 'direct', n: 1 } }])
    // A change that arrives while a question is under way waits for the next one. (The late event came 60 ms after
    // its change: changes now wait 120 ms.)
    direct.changed({ type: 'add', old_val: null, new_val: { id: 'next', n: 1 } })
    await jest.advanceTimersByTimeAsync(DELAY * 3)
    expect(answers).toHaveLength(2)
    await jest.advanceTimersByTimeAsync(DELAY * 3)
    expect(answers).toHaveLength(3)
    direct.changed({ type: 'add', old_val: null, new_val: { id: 'meanwhile', n: 1 } })
    answers[2]!(true)
    await jest.advanceTimersByTimeAsync(0)
    expect(published.map(({ record }) => record.id)).toEqual(['direct', 'next'])
    await jest.advanceTimersByTimeAsync(DELAY * 6)
    answers[3]!(true)
    await jest.advanceTimersByTimeAsync(0)
    expect(published.map(({ record }) => record.id)).toEqual(['direct', 'next', 'meanwhile'])
  })

  it('ignores custom events and rows without an id, and forgets everything on clear', () => {
    const { direct, published } = harness()
    direct.logged('archived', 'not a record')
    direct.changed({ type: 'add', old_val: null, new_val: { text: 'no id' } })
    direct.changed({ type: 'add', old_val: null, new_val: { id: 'dropped' } })
    direct.clear()
    settle()
    expect(published).toEqual([])
  })

  it('waits with one timer however many table changes wait for their logged events', () => {
    const { direct, published } = harness()
    for (let id = 0; id < 100; id++) direct.changed({ type: 'add', old_val: null, new_val: { id, n: 1 } })
    expect(jest.getTimerCount()).toBe(1)
    for (let id = 0; id < 100; id += 2) direct.logged('created', { id, n: 1 })
    settle()
    expect(published.map(({ record }) => record.id)).toEqual(Array.from({ length: 50 }, (_, index) => index * 2 + 1))
    expect(jest.getTimerCount()).toBe(0)
  })

  it('goes on with the changes that arrive while a listener stops watching', () => {
    const published: StoreChange<Data>[] = []
    const direct: DirectWrites = new DirectWrites({
      idField: 'id',
      delayMs: DELAY,
      logCaughtUp: () => true,
      publish: (change) => {
        published.push(change)
        direct.clear()
      }
    })
    direct.changed({ type: 'add', old_val: null, new_val: { id: 'a' } })
    direct.changed({ type: 'add', old_val: null, new_val: { id: 'b' } })
    settle()
    expect(published.map(({ record }) => record.id)).toEqual(['a'])
    direct.changed({ type: 'add', old_val: null, new_val: { id: 'c' } })
    settle()
    expect(published.map(({ record }) => record.id)).toEqual(['a', 'c'])
  })

  /** A DirectWrites whose publish logs: it answers later, with `log(true | false)` or `fail()`. */
  function logging() {
    const published: StoreChange<Data>[] = []
    const answers: ((logged: boolean | Error) => void)[] = []
    const direct = new DirectWrites({
      idField: 'id',
      delayMs: DELAY,
      logCaughtUp: () => true,
      publish: (change) => {
        published.push(change)
        return new Promise<boolean>((resolve, reject) =>
          answers.push((logged) => (logged instanceof Error ? reject(logged) : resolve(logged)))
        )
      }
    })
    return { direct, published, answers }
  }

  it('does not take the event it logged itself for a store write that is still to come', async () => {
    const { direct, published, answers } = logging()
    direct.changed({ type: 'add', old_val: null, new_val: { id: 'x', n: 1 } })
    settle()
    expect(published).toHaveLength(1)
    answers[0]!(true)
    await jest.advanceTimersByTimeAsync(0)
    // Its own logged event comes back through the log: consumed, not expected from the table again…
    direct.logged('created', { id: 'x', n: 1 })
    // …so the same change made again directly is published again.
    direct.changed({ type: 'change', old_val: { id: 'x', n: 2 }, new_val: { id: 'x', n: 1 } })
    settle()
    expect(published).toHaveLength(2)
  })

  it('forgets a change it could not log (a failed query, or the lease gone), so a later logged event still matches', async () => {
    const { direct, published, answers } = logging()
    direct.changed({ type: 'add', old_val: null, new_val: { id: 'y', n: 1 } })
    direct.changed({ type: 'add', old_val: null, new_val: { id: 'z', n: 1 } })
    settle()
    answers[0]!(false)
    answers[1]!(new Error('the database is away'))
    await jest.advanceTimersByTimeAsync(0)
    // These events now come from a store's writes: each expected, and its table change dropped.
    direct.logged('created', { id: 'y', n: 1 })
    direct.logged('created', { id: 'z', n: 1 })
    direct.changed({ type: 'add', old_val: null, new_val: { id: 'y', n: 1 } })
    direct.changed({ type: 'add', old_val: null, new_val: { id: 'z', n: 1 } })
    settle()
    expect(published.map(({ record }) => record.id)).toEqual(['y', 'z'])
  })

  it('drains: resolves once every waiting change was matched or published and logged', async () => {
    const { direct, published, answers } = logging()
    await direct.drain()
    direct.changed({ type: 'add', old_val: null, new_val: { id: 'matched' } })
    direct.changed({ type: 'add', old_val: null, new_val: { id: 'published' } })
    let drained = false
    void direct.drain().then(() => (drained = true))
    direct.logged('created', { id: 'matched' })
    await jest.advanceTimersByTimeAsync(0)
    expect(drained).toBe(false)
    await jest.advanceTimersByTimeAsync(DELAY * 3)
    expect(published.map(({ record }) => record.id)).toEqual(['published'])
    expect(drained).toBe(false)
    answers[0]!(true)
    await jest.advanceTimersByTimeAsync(0)
    expect(drained).toBe(true)
  })
})
