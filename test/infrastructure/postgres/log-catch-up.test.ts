import { describe, expect, it } from '@jest/globals'
import { LogCatchUp } from '../../../src/infrastructure/postgres/log-catch-up.js'

// Read your writes on the PostgreSQL log: a caller is caught up once a complete read whose snapshot's xmin reaches
// the xmax of the first read that started after it asked.
describe('LogCatchUp', () => {
  it('takes the target from the first read started after the call, and waits for a complete read reaching it', async () => {
    const catchUp = new LogCatchUp()
    const before = catchUp.issue()
    let reads = 0
    let settled: boolean | undefined
    const waiting = catchUp.wait(5_000, () => reads++).then((caughtUp) => (settled = caughtUp))
    expect(reads).toBe(1)
    // A read that started before the call proves nothing, whatever its snapshot.
    catchUp.done(before, 100n, 100n, true)
    const first = catchUp.issue()
    // Another transaction (id 7) was still running: xmin 7 < xmax 10, the write may be held back.
    catchUp.done(first, 7n, 10n, true)
    await Promise.resolve()
    expect(settled).toBeUndefined()
    // A full batch reaching the target is not complete: rows below its xmin may still follow.
    catchUp.done(catchUp.issue(), 12n, 12n, false)
    await Promise.resolve()
    expect(settled).toBeUndefined()
    catchUp.done(catchUp.issue(), 10n, 13n, true)
    await waiting
    expect(settled).toBe(true)
  })

  it('is caught up by one read when no other transaction was running (xmin = xmax)', async () => {
    const catchUp = new LogCatchUp()
    const waiting = catchUp.wait(5_000, () => undefined)
    catchUp.done(catchUp.issue(), 42n, 42n, true)
    expect(await waiting).toBe(true)
  })

  it('answers false after its timeout, and when the follower stops', async () => {
    const catchUp = new LogCatchUp()
    expect(await catchUp.wait(20, () => undefined)).toBe(false)
    const stopped = catchUp.wait(5_000, () => undefined)
    catchUp.cancel()
    expect(await stopped).toBe(false)
  })
})
