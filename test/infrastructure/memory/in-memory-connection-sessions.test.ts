import { describe, expect, it } from '@jest/globals'
import { InMemoryConnectionSessions } from '../../../src/infrastructure/memory/in-memory-connection-sessions.js'
import { FakeClock } from '../../support/fake-clock.js'

describe('InMemoryConnectionSessions', () => {
  // The ConnectionSessions contract runs on this adapter from the kit: memory.contract.test.ts. Here: its housekeeping.
  it('drops expired sessions as others are saved, and a session saved as connected again is kept', async () => {
    const clock = new FakeClock()
    const sessions = new InMemoryConnectionSessions(clock, 1000)
    await sessions.save({ id: 'old', connectionId: 'a', disconnectedAt: clock.now() })
    await sessions.save({ id: 'back', connectionId: 'b', disconnectedAt: clock.now() })
    await sessions.save({ id: 'back', connectionId: 'b' })
    clock.advance(5000)
    await sessions.save({ id: 'new', connectionId: 'c' })
    expect((sessions as unknown as { sessions: Map<string, unknown> }).sessions.has('old')).toBe(false)
    expect(await sessions.load('back')).toEqual({ id: 'back', connectionId: 'b' })
  })
})
