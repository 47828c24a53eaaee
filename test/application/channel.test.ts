import { describe, expect, it } from '@jest/globals'
import { Channel, CombinedChannel } from '../../src/application/channel.js'
import type { Connection } from '../../src/domain/service/service.js'

const connection = (name: string, user?: Record<string, unknown>): Connection => ({
  provider: 'socketio',
  name,
  ...(user ? { user } : {})
})
const names = (channel: Channel) => [...channel.connections].map((member) => member.name)

describe('Channel', () => {
  it('joins connections once each, and counts them', () => {
    const [a, b] = [connection('a'), connection('b')]
    const channel = new Channel()
    expect(channel.join(a, b).join(a)).toBe(channel)
    expect(names(channel)).toEqual(['a', 'b'])
    expect(channel.length).toBe(2)
  })

  it('leaves by connection, or by a test of each connection', () => {
    const [a, b, c] = [connection('a', { id: 1 }), connection('b', { id: 2 }), connection('c', { id: 1 })]
    const channel = new Channel().join(a, b, c)
    expect(channel.leave(b)).toBe(channel)
    expect(names(channel)).toEqual(['a', 'c'])
    channel.leave((member) => member.user?.id === 1)
    expect(channel.length).toBe(0)
  })

  it('leaving a connection that is not there changes nothing', () => {
    const channel = new Channel().join(connection('a'))
    channel.leave(connection('a'))
    expect(names(channel)).toEqual(['a'])
  })

  it('filter gives a new channel of the connections that pass, leaving the original whole', () => {
    const [a, b] = [connection('a', { id: 1 }), connection('b', { id: 2 })]
    const channel = new Channel().join(a, b)
    const filtered = channel.filter((member) => member.user?.id === 2)
    expect(filtered).not.toBe(channel)
    expect(names(filtered)).toEqual(['b'])
    expect(names(channel)).toEqual(['a', 'b'])
  })

  it('send gives a channel of the same connections that carries other data; the original carries none', () => {
    const channel = new Channel().join(connection('a'))
    const sent = channel.send({ text: 'redacted' })
    expect(sent).not.toBe(channel)
    expect(sent.data).toEqual({ text: 'redacted' })
    expect(names(sent)).toEqual(['a'])
    expect(channel.data).toBeUndefined()
  })
})

describe('CombinedChannel', () => {
  it('holds the union of its members, each connection once', () => {
    const [a, b, c] = [connection('a'), connection('b'), connection('c')]
    const combined = new CombinedChannel([new Channel().join(a, b), new Channel().join(b, c)])
    expect(names(combined).sort()).toEqual(['a', 'b', 'c'])
    expect(combined.length).toBe(3)
  })

  it('joins a connection to every member', () => {
    const [first, second] = [new Channel(), new Channel()]
    const combined = new CombinedChannel([first, second])
    expect(combined.join(connection('a'))).toBe(combined)
    expect([names(first), names(second), names(combined)]).toEqual([['a'], ['a'], ['a']])
  })

  it('removes a connection, or those that pass a test, from every member', () => {
    const [a, b] = [connection('a', { id: 1 }), connection('b', { id: 2 })]
    const [first, second] = [new Channel().join(a, b), new Channel().join(a)]
    const combined = new CombinedChannel([first, second])
    combined.leave(a)
    expect([names(first), names(second), names(combined)]).toEqual([['b'], [], ['b']])
    combined.leave((member) => member.user?.id === 2)
    expect([first.length, second.length, combined.length]).toEqual([0, 0, 0])
  })
})
