import { describe, expect, it } from '@jest/globals'
import type { Namespace } from 'socket.io'
import { recoveryAdapter, type SessionRestorer } from '../../../src/interfaces/socketio/recovery-adapter.js'

/*
 * Connection state recovery when a client reconnects twice in a row (a flaky network): both connections ask to
 * resume one session, and the lookups may finish in either order. Found by the chaos bench: the first connection's
 * late answer closed the socket the second had opened under the same id, with "io server disconnect", after which a
 * socket.io client never reconnects.
 */

interface Lookup {
  resolve(found: { sid: string; data: unknown } | undefined): void
  reject(error: Error): void
}

function adapterWith(sockets: Map<string, { id: string }>) {
  const lookups: Lookup[] = []
  const replaced: string[] = []
  const restorer: SessionRestorer = {
    restore: () => new Promise((resolve, reject) => lookups.push({ resolve, reject })),
    replace: (stale) => void replaced.push(stale.id)
  }
  const Recovery = recoveryAdapter(restorer)
  const adapter = new Recovery({ server: { encoder: {} }, sockets } as unknown as Namespace)
  return { adapter, lookups, replaced }
}

const session = { sid: 'socket-1', data: { restorable: true } }

describe('the recovery adapter', () => {
  it('restores a session, closing the socket a dead connection still holds under its id', async () => {
    const sockets = new Map([['socket-1', { id: 'socket-1' }]])
    const { adapter, lookups, replaced } = adapterWith(sockets)
    const restoring = adapter.restoreSession('pid-1', 'offset-1')
    lookups[0]!.resolve(session)
    expect(await restoring).toEqual({ sid: 'socket-1', pid: 'pid-1', rooms: [], data: session.data, missedPackets: [] })
    expect(replaced).toEqual(['socket-1'])
  })

  it('answers "not restored" for a session it cannot resume', async () => {
    const { adapter, lookups, replaced } = adapterWith(new Map())
    const restoring = adapter.restoreSession('pid-1', 'offset-1')
    lookups[0]!.resolve(undefined)
    expect(await restoring).toBeNull()
    expect(replaced).toEqual([])
  })

  it('lets the newer of two reconnections keep the session when the older one is answered last', async () => {
    const sockets = new Map<string, { id: string }>()
    const { adapter, lookups, replaced } = adapterWith(sockets)
    const older = adapter.restoreSession('pid-1', 'offset-1')
    const newer = adapter.restoreSession('pid-1', 'offset-1')
    lookups[1]!.resolve(session)
    expect(await newer).toMatchObject({ sid: 'socket-1' })
    // socket.io opens the newer connection's socket under the session's id.
    sockets.set('socket-1', { id: 'socket-1' })
    lookups[0]!.resolve(session)
    expect(await older).toBeNull()
    expect(replaced).toEqual([])
  })

  it('restores only the newer reconnection also when the older one is answered first', async () => {
    const sockets = new Map<string, { id: string }>()
    const { adapter, lookups, replaced } = adapterWith(sockets)
    const older = adapter.restoreSession('pid-1', 'offset-1')
    const newer = adapter.restoreSession('pid-1', 'offset-1')
    lookups[0]!.resolve(session)
    expect(await older).toBeNull()
    lookups[1]!.resolve(session)
    expect(await newer).toMatchObject({ sid: 'socket-1' })
    expect(replaced).toEqual([])
  })

  it('keeps sessions apart, and forgets an attempt once answered, even when its lookup failed', async () => {
    const { adapter, lookups } = adapterWith(new Map())
    const one = adapter.restoreSession('pid-1', 'offset-1')
    const other = adapter.restoreSession('pid-2', 'offset-1')
    lookups[1]!.resolve({ sid: 'socket-2', data: {} })
    lookups[0]!.reject(new Error('store down'))
    await expect(one).rejects.toThrow('store down')
    expect(await other).toMatchObject({ sid: 'socket-2' })
    const again = adapter.restoreSession('pid-1', 'offset-2')
    lookups[2]!.resolve(session)
    expect(await again).toMatchObject({ sid: 'socket-1' })
  })
})
