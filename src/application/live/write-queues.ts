import type { FeedPoint } from './progress.js'

/** A point of the event feed, or its start (no offset before the first event). */
export type FeedPosition = Omit<FeedPoint, 'offset'> & { offset: string | undefined }

interface Queue {
  tail: Promise<void>
  /** The feed's point before each write still queued, oldest first. */
  before: FeedPosition[]
}

/**
 * The writes of services with event resolvers on their way to the views (ADR 0019): each is resolved once per rule
 * set, then offered, one service's writes in publication order. While some wait, that service's views are current
 * at the point before the first of them — what a view's offset and a progress frame may claim.
 */
export class WriteQueues {
  private readonly queues = new Map<string, Queue>()
  /** The count of the write being offered, while it is: its frames are stamped with it. */
  offering: number | undefined

  has(path: string): boolean {
    return this.queues.has(path)
  }

  /** Queues the write of `path` that is event `count` (the feed was at `before`): `run` after the earlier ones. */
  add(
    path: string,
    before: string | undefined,
    count: number,
    run: () => Promise<void>,
    failed: (error: unknown) => void
  ) {
    let queue = this.queues.get(path)
    if (!queue) this.queues.set(path, (queue = { tail: Promise.resolve(), before: [] }))
    const written = queue
    queue.before.push({ offset: before, count: count - 1 })
    queue.tail = queue.tail
      .then(run)
      .catch(failed)
      .finally(() => {
        written.before.shift()
        if (written.before.length === 0) this.queues.delete(path)
      })
  }

  /** Offers a write: the frames `offer` sends are stamped with its count. */
  stamped(count: number, offer: () => void): void {
    this.offering = count
    try {
      offer()
    } finally {
      this.offering = undefined
    }
  }

  /** Where the views of `path` are current: before its first queued write, else at the feed's head. */
  point(path: string, head: FeedPosition): FeedPosition {
    return this.queues.get(path)?.before[0] ?? head
  }

  /** Resolves once every write queued so far reached the views. */
  async idle(): Promise<void> {
    await Promise.all([...this.queues.values()].map((queue) => queue.tail))
  }
}
