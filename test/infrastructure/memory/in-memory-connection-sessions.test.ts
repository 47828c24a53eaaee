import { describe, expect, it } from '@jest/globals'
import { InMemoryConnectionSessions } from '../../../src/infrastructure/memory/in-memory-connection-sessions.js'
import { FakeClock } from '../../support/fake-clock.js'

describe('InMemoryConnectionSessions', () => {
  it('saves, loads (a copy) and removes sessions', async () => {
    const sessions = new InMemoryConnectionSessions(new FakeClock(), 1000)
    const session = { id: 'p1', connectionId: 's1', authentication: { strategy: 'jwt', accessToken: 't' } }
    await sessions.save(session)
    const loaded = await sessions.load('p1')
    expect(loaded).toEqual(session)
    loaded!.connectionId = 'changed'
    expect((await sessions.load('p1'))?.connectionId).toBe('s1')
    await sessions.remove('p1')
    expect(await sessions.load('p1')).toBeUndefined()
  })

  it('keeps a connected session however old; a lost one expires after the window', async () => {
    const clock = new FakeClock()
    const sessions = new InMemoryConnectionSessions(clock, 1000)
    await sessions.save({ id: 'connected', connectionId: 'a' })
    await sessions.save({ id: 'lost', connectionId: 'b', disconnectedAt: clock.now() })
    clock.advance(1000)
    expect(await sessions.load('lost')).toBeDefined()
    clock.advance(1)
    expect(await sessions.load('lost')).toBeUndefined()
    expect(await sessions.load('connected')).toBeDefined()
  })

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
