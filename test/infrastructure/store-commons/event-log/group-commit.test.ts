import { describe, expect, it } from '@jest/globals'
import { GroupCommit } from '../../../../src/infrastructure/store-commons/event-log/group-commit.js'

/** A query runner the test finishes by hand: each run waits until `finish` is called for it. */
function runner() {
  const runs: { calls: number[][]; finish(fail?: Error): void }[] = []
  const run = (calls: number[][]) =>
    new Promise<string[]>((resolve, reject) => {
      runs.push({ calls, finish: (fail) => (fail ? reject(fail) : resolve(calls.map((items) => items.join('+')))) })
    })
  return { runs, run }
}

/** A few turns of the event loop: a finished query's callers have answered, and the next query went out. */
const tick = async () => {
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve))
}

describe('GroupCommit', () => {
  it('runs a lone call at once, and the calls that arrive meanwhile together as the next query', async () => {
    const { runs, run } = runner()
    const group = new GroupCommit<number, string>({ run })
    const first = group.submit([1])
    expect(runs.map((each) => each.calls)).toEqual([[[1]]])
    const later = [group.submit([2, 3]), group.submit([4]), group.submit([5])]
    expect(runs).toHaveLength(1)
    runs[0]!.finish()
    expect(await first).toBe('1')
    await tick()
    expect(runs[1]!.calls).toEqual([[2, 3], [4], [5]])
    runs[1]!.finish()
    expect(await Promise.all(later)).toEqual(['2+3', '4', '5'])
  })

  it('counts a write sent before it was made as in flight: the calls that come meanwhile wait and go together', async () => {
    const { runs, run } = runner()
    let endEarlier!: () => void
    const earlier = new Promise<void>((resolve) => (endEarlier = resolve))
    const group = new GroupCommit<number, string>({ run, inFlight: earlier })
    const later = [group.submit([1]), group.submit([2])]
    await tick()
    expect(runs).toHaveLength(0)
    endEarlier()
    await tick()
    expect(runs.map((each) => each.calls)).toEqual([[[1], [2]]])
    runs[0]!.finish()
    expect(await Promise.all(later)).toEqual(['1', '2'])
  })

  it('sends the calls its answered callers make in the same turn together, not the first one alone', async () => {
    const { runs, run } = runner()
    const group = new GroupCommit<number, string>({ run })
    const firsts = [group.submit([1]), group.submit([2])]
    runs[0]!.finish()
    await tick()
    // Writers in a loop: each submits its next call as soon as its last one is answered, some a few awaits later.
    const nexts = [
      firsts[0]!.then(() => group.submit([3])),
      firsts[1]!.then(async () => {
        for (let hop = 0; hop < 5; hop++) await Promise.resolve()
        return group.submit([4])
      })
    ]
    runs[1]!.finish()
    await tick()
    expect(runs[2]!.calls).toEqual([[3], [4]])
    runs[2]!.finish()
    expect(await Promise.all(nexts)).toEqual(['3', '4'])
  })

  it('never puts more than maxItems in one query, nor splits a call', async () => {
    const { runs, run } = runner()
    const group = new GroupCommit<number, string>({ run, maxItems: 3 })
    const all = [group.submit([1]), group.submit([2, 3]), group.submit([4]), group.submit([5, 6, 7, 8])]
    runs[0]!.finish()
    await tick()
    expect(runs[1]!.calls).toEqual([[2, 3], [4]])
    runs[1]!.finish()
    await tick()
    expect(runs[2]!.calls).toEqual([[5, 6, 7, 8]])
    runs[2]!.finish()
    expect(await Promise.all(all)).toEqual(['1', '2+3', '4', '5+6+7+8'])
  })

  it('fails every caller of a failed query, and goes on with the next', async () => {
    const { runs, run } = runner()
    const group = new GroupCommit<number, string>({ run })
    const first = group.submit([1])
    const batch = [group.submit([2]), group.submit([3])]
    const after = group.submit([4])
    runs[0]!.finish()
    await first
    await tick()
    runs[1]!.finish(new Error('server gone'))
    for (const call of batch) await expect(call).rejects.toThrow('server gone')
    // 4 arrived while 1 was in flight: it went out with 2 and 3.
    await expect(after).rejects.toThrow('server gone')
    const next = group.submit([5])
    await tick()
    runs[2]!.finish()
    expect(await next).toBe('5')
  })

  it('keeps up to maxInFlight queries going', async () => {
    const { runs, run } = runner()
    const group = new GroupCommit<number, string>({ run, maxInFlight: 2 })
    const all = [group.submit([1]), group.submit([2]), group.submit([3]), group.submit([4])]
    expect(runs.map((each) => each.calls)).toEqual([[[1]], [[2]]])
    runs[1]!.finish()
    await tick()
    expect(runs[2]!.calls).toEqual([[3], [4]])
    runs[0]!.finish()
    runs[2]!.finish()
    expect(await Promise.all(all)).toEqual(['1', '2', '3', '4'])
  })
})
