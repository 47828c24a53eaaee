import type { Connection } from '../domain/service/service.js'

/** A group of real-time connections that events are published to (Feathers channels). */
export class Channel {
  /** Data sent to this channel instead of the event's own payload (see `send`). */
  data?: unknown

  constructor(readonly connections: Set<Connection> = new Set()) {}

  get length(): number {
    return this.connections.size
  }

  join(...connections: Connection[]): this {
    for (const connection of connections) this.connections.add(connection)
    return this
  }

  leave(...connections: (Connection | ((connection: Connection) => boolean))[]): this {
    for (const item of connections) {
      if (typeof item === 'function') {
        for (const connection of [...this.connections]) if (item(connection)) this.connections.delete(connection)
      } else this.connections.delete(item)
    }
    return this
  }

  /** A new channel with the connections that pass the test (e.g. only the author's). */
  filter(test: (connection: Connection) => boolean): Channel {
    return new Channel(new Set([...this.connections].filter(test)))
  }

  /** A channel that sends `data` instead of the event payload. */
  send(data: unknown): Channel {
    const channel = new Channel(this.connections)
    channel.data = data
    return channel
  }
}

/** Several named channels as one: joins and leaves apply to each, publishing to their union. */
export class CombinedChannel extends Channel {
  constructor(private readonly members: Channel[]) {
    super(new Set(members.flatMap((member) => [...member.connections])))
  }

  override join(...connections: Connection[]): this {
    for (const member of this.members) member.join(...connections)
    return super.join(...connections)
  }

  override leave(...connections: (Connection | ((connection: Connection) => boolean))[]): this {
    for (const member of this.members) member.leave(...connections)
    return super.leave(...connections)
  }
}

export type Publisher = (data: unknown, context: unknown) => Channel | Channel[] | null | undefined | void

/**
 * One delivery: these connections receive this payload as the event `event` of service `path` (on socket.io: `"<path>
 * <event>"`).
 */
export interface Delivery {
  path: string
  event: string
  data: unknown
  connections: Connection[]
  /**
   * The event's place in the app's event history, when it keeps one: the transport hands it to clients to resume from.
   */
  offset?: string
}
