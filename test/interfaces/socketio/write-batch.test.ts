import { describe, expect, it } from '@jest/globals'
import type { Socket } from 'socket.io'
import { WriteBatch } from '../../../src/interfaces/socketio/write-batch.js'

/** A socket.io socket over a websocket whose TCP socket counts its corks and uncorks. */
function fakeSocket(transport = 'websocket') {
  const tcp = { corks: 0, uncorks: 0, destroyed: false, cork: () => tcp.corks++, uncork: () => tcp.uncorks++ }
  const socket = { conn: { transport: { name: transport, socket: { _socket: tcp } } } } as unknown as Socket
  return { socket, tcp }
}

const endOfTurn = () => new Promise((resolve) => setImmediate(resolve))

describe('WriteBatch', () => {
  it("corks every socket from its first frame of the turn, once, and uncorks it after the turn's callbacks", async () => {
    const batch = new WriteBatch()
    const first = fakeSocket()
    const second = fakeSocket()
    batch.add(first.socket)
    batch.add(second.socket)
    batch.add(first.socket)
    expect([first.tcp.corks, second.tcp.corks]).toEqual([1, 1])
    expect([first.tcp.uncorks, second.tcp.uncorks]).toEqual([0, 0])
    await endOfTurn()
    expect([first.tcp.uncorks, second.tcp.uncorks]).toEqual([1, 1])
    // The next turn corks again.
    batch.add(first.socket)
    expect(first.tcp.corks).toBe(2)
    await endOfTurn()
    expect(first.tcp.uncorks).toBe(2)
  })

  it('leaves a destroyed socket and a polling transport alone', async () => {
    const batch = new WriteBatch()
    const gone = fakeSocket()
    const polling = fakeSocket('polling')
    batch.add(gone.socket)
    batch.add(polling.socket)
    gone.tcp.destroyed = true
    await endOfTurn()
    expect([gone.tcp.corks, gone.tcp.uncorks]).toEqual([1, 0])
    expect([polling.tcp.corks, polling.tcp.uncorks]).toEqual([0, 0])
  })
})
