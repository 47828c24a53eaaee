import {
  silentAfterMs,
  type ConnectionSession,
  type ConnectionSessions
} from '../domain/realtime/connection-sessions.js'
import type { Clock } from '../domain/clock.js'
import { defineContract } from './contract.js'
import { SteppedClock } from './stepped-clock.js'

/** What a case asks for: the sessions called `name`, on this clock, with this recovery window. */
export interface ConnectionSessionsRequest {
  /** Unique to the case, except that a case may open one name twice: two instances of the app over one set. */
  name: string
  clock: Clock
  windowMs: number
}

export interface ConnectionSessionsContractOptions {
  open(request: ConnectionSessionsRequest): ConnectionSessions | Promise<ConnectionSessions>
}

const WINDOW_MS = 1000

/**
 * The ConnectionSessions contract. `in one process`: sessions saved, loaded (as copies) and removed; a lost one
 * expires once it has been away longer than the recovery window, a connected one never does. `across processes`:
 * every instance over the same sessions reads them, so a client resumes on any of them, and the sessions an
 * instance held as connected count as lost once it went silent (see `silentAfterMs`).
 */
export const runConnectionSessionsContract = defineContract<ConnectionSessionsContractOptions>(
  'ConnectionSessions',
  ({ group, test, beforeEach, expect }, options) => {
    let clock: SteppedClock
    let cases = 0
    let name = ''
    const open = async (): Promise<ConnectionSessions> => options.open({ name, clock, windowMs: WINDOW_MS })
    beforeEach(() => {
      clock = new SteppedClock()
      name = `connection_sessions_${++cases}`
    })
    const session: ConnectionSession = {
      id: 'private-id',
      connectionId: 'public-id',
      authentication: { strategy: 'jwt', accessToken: 'token-1' },
      authenticationOffset: 'e.1'
    }

    group('in one process', () => {
      test('saves, loads and removes sessions; an unknown id loads nothing', async () => {
        const sessions = await open()
        await sessions.save(session)
        expect(await sessions.load('private-id')).toEqual(session)
        await sessions.save({ ...session, disconnectedAt: clock.now() })
        expect(await sessions.load('private-id')).toEqual({ ...session, disconnectedAt: clock.now() })
        await sessions.remove('private-id')
        expect(await sessions.load('private-id')).toBeUndefined()
        expect(await sessions.load('never')).toBeUndefined()
        await sessions.remove('never')
      })

      test('answers copies: changing a loaded session changes nothing saved', async () => {
        const sessions = await open()
        await sessions.save(session)
        const loaded = await sessions.load('private-id')
        loaded!.connectionId = 'changed'
        loaded!.authentication!.accessToken = 'changed'
        expect(await sessions.load('private-id')).toEqual(session)
      })

      test('keeps a connected session however old; a lost one expires after the window', async () => {
        const sessions = await open()
        await sessions.save({ id: 'connected', connectionId: 'a' })
        await sessions.save({ id: 'lost', connectionId: 'b', disconnectedAt: clock.now() })
        clock.advance(WINDOW_MS)
        expect(await sessions.load('lost')).toEqual({
          id: 'lost',
          connectionId: 'b',
          disconnectedAt: clock.now() - WINDOW_MS
        })
        clock.advance(1)
        expect(await sessions.load('lost')).toBeUndefined()
        clock.advance(60 * WINDOW_MS)
        expect(await sessions.load('connected')).toEqual({ id: 'connected', connectionId: 'a' })
      })

      test('keeps a lost session saved as connected again', async () => {
        const sessions = await open()
        await sessions.save({ id: 'back', connectionId: 'b', disconnectedAt: clock.now() })
        await sessions.save({ id: 'back', connectionId: 'b' })
        clock.advance(5 * WINDOW_MS)
        expect(await sessions.load('back')).toEqual({ id: 'back', connectionId: 'b' })
      })
    })

    group('across processes', () => {
      test('lets every instance over the same sessions read, replace and remove them', async () => {
        const [first, second] = [await open(), await open()]
        await first.save(session)
        expect(await second.load('private-id')).toEqual(session)
        await second.save({ ...session, disconnectedAt: clock.now() })
        expect(await first.load('private-id')).toEqual({ ...session, disconnectedAt: clock.now() })
        await first.remove('private-id')
        expect(await second.load('private-id')).toBeUndefined()
      })

      test('counts the connected sessions of an instance gone silent (killed) as lost from its last heartbeat', async () => {
        const [first, second] = [await open(), await open()]
        await first.save({ id: 'held', connectionId: 'a' })
        const lastBeat = clock.now()
        // It stops beating, as a killed instance does (close() is what a graceful shutdown calls).
        await first.close()
        clock.advance(silentAfterMs(WINDOW_MS))
        // Not silent for long enough: the connection may still be up, a client reconnecting elsewhere resumes.
        expect(await second.load('held')).toEqual({ id: 'held', connectionId: 'a' })
        clock.advance(1)
        expect(await second.load('held')).toEqual({ id: 'held', connectionId: 'a', disconnectedAt: lastBeat })
        clock.advance(WINDOW_MS)
        expect(await second.load('held')).toBeUndefined()
        // Saved again by a live instance, it is that one's: connected however old.
        await second.save({ id: 'held', connectionId: 'b' })
        clock.advance(60 * WINDOW_MS)
        expect(await second.load('held')).toEqual({ id: 'held', connectionId: 'b' })
        await second.close()
      })
    })
  }
)
