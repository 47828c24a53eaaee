/**
 * RethinkDB reports `replace()` and `update()` alike as a `change`, but Feathers clients expect
 * `updated` for update and `patched` for patch. Before this process replaces a record it tags the id;
 * the change feed consumes the tag when the change arrives and reports `updated`. Tags expire, so a
 * change that never arrives (feed re-opened, no-op write) cannot mislabel a later patch for long.
 * Changes made by other processes carry no tag here and are reported as `patched`.
 */
const PRUNE_AT = 1_000

export class UpdateTags {
  private readonly tags = new Map<string, number[]>()

  constructor(
    private readonly ttlMs = 10_000,
    private readonly now: () => number = Date.now
  ) {}

  /** Expects one `change` for this id; returns a function that withdraws the expectation. */
  expect(id: unknown): () => void {
    if (this.tags.size >= PRUNE_AT) this.prune()
    const key = keyOf(id)
    const expiry = this.now() + this.ttlMs
    const list = this.live(key)
    list.push(expiry)
    this.tags.set(key, list)
    return () => {
      const current = this.tags.get(key)
      const index = current?.indexOf(expiry) ?? -1
      if (current && index >= 0) {
        current.splice(index, 1)
        if (current.length === 0) this.tags.delete(key)
      }
    }
  }

  /** True when a change for this id was expected (and uses that expectation up). */
  consume(id: unknown): boolean {
    const key = keyOf(id)
    const list = this.live(key)
    const found = list.shift() !== undefined
    if (list.length > 0) this.tags.set(key, list)
    else this.tags.delete(key)
    return found
  }

  get size(): number {
    return this.tags.size
  }

  /** Drops ids whose every tag expired (their change never came), so the map cannot grow forever. */
  private prune(): void {
    for (const key of [...this.tags.keys()]) {
      const list = this.live(key)
      if (list.length > 0) this.tags.set(key, list)
      else this.tags.delete(key)
    }
  }

  private live(key: string): number[] {
    const now = this.now()
    return (this.tags.get(key) ?? []).filter((expiry) => expiry > now)
  }
}

/** JSON keeps 0 and "0" apart: they are different primary keys in RethinkDB. */
function keyOf(id: unknown): string {
  return JSON.stringify(id) ?? 'undefined'
}
