import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals'
import { silentLogger } from '../../../../src/domain/logger.js'
import { heartbeatMs } from '../../../../src/domain/realtime/connection-sessions.js'
import { Heartbeat } from '../../../../src/infrastructure/store-commons/event-log/heartbeat.js'

describe('Heartbeat', () => {
  beforeEach(() => {
    jest.useFakeTimers()
  })
  afterEach(() => {
    jest.useRealTimers()
  })

  it('writes the first beat once for every caller, then one per interval until stopped', async () => {
    const beats: string[] = []
    const heartbeat = new Heartbeat(async (id) => void beats.push(id), 120_000, silentLogger)
    await Promise.all([heartbeat.started(), heartbeat.started()])
    expect(beats).toEqual([heartbeat.id])
    expect(heartbeatMs(120_000)).toBe(10_000)
    jest.advanceTimersByTime(25_000)
    expect(beats).toHaveLength(3)
    heartbeat.stop()
    jest.advanceTimersByTime(60_000)
    expect(beats).toHaveLength(3)
  })

  it('tries the first beat again after it failed, and keeps beating after a later one failed', async () => {
    let failing = true
    let beats = 0
    const heartbeat = new Heartbeat(
      async () => {
        beats++
        if (failing) throw new Error('database away')
      },
      4000,
      silentLogger
    )
    await expect(heartbeat.started()).rejects.toThrow('database away')
    failing = false
    await heartbeat.started()
    expect(beats).toBe(2)
    failing = true
    jest.advanceTimersByTime(heartbeatMs(4000))
    await Promise.resolve()
    failing = false
    jest.advanceTimersByTime(heartbeatMs(4000))
    expect(beats).toBe(4)
    heartbeat.stop()
  })
})
