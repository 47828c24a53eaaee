import type { Clock } from '../../domain/clock.js'
import type { ConnectionSession, ConnectionSessions } from '../../domain/realtime/connection-sessions.js'

/**
 * Connection sessions in this process's memory, for one instance: a client resumes on the process
 * that served it. A lost session expires `windowMs` after the connection was lost; expired ones are
 * dropped as others are saved.
 */
export class InMemoryConnectionSessions implements ConnectionSessions {
  private readonly sessions = new Map<string, ConnectionSession>()
  /** Ids of lost sessions in the order they were lost: expired ones are at the front. */
  private readonly lost = new Map<string, number>()

  constructor(
    private readonly clock: Clock,
    private readonly windowMs: number
  ) {}

  async save(session: ConnectionSession): Promise<void> {
    this.dropExpired()
    this.sessions.set(session.id, { ...session })
    this.lost.delete(session.id)
    if (session.disconnectedAt !== undefined) this.lost.set(session.id, session.disconnectedAt)
  }

  async load(id: string): Promise<ConnectionSession | undefined> {
    const session = this.sessions.get(id)
    if (!session) return undefined
    if (this.expired(session)) {
      this.sessions.delete(id)
      this.lost.delete(id)
      return undefined
    }
    return { ...session }
  }

  async remove(id: string): Promise<void> {
    this.sessions.delete(id)
    this.lost.delete(id)
  }

  /** Nothing to stop: one process holds every session, and they go with it. */
  async close(): Promise<void> {}

  private expired(session: ConnectionSession): boolean {
    return session.disconnectedAt !== undefined && session.disconnectedAt + this.windowMs < this.clock.now()
  }

  private dropExpired(): void {
    const oldest = this.clock.now() - this.windowMs
    for (const [id, at] of this.lost) {
      if (at >= oldest) break
      this.sessions.delete(id)
      this.lost.delete(id)
    }
  }
}
