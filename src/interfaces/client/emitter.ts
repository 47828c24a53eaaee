export type Listener = (...args: unknown[]) => void

/**
 * A minimal event emitter for browser-safe client code (node:events is not available in browsers).
 * `onFirst`/`onLast` let a real-time transport subscribe to the wire only while someone listens.
 */
export class Emitter {
  private readonly listeners = new Map<string, Listener[]>()

  constructor(private readonly watchers: { onFirst?(event: string): void; onLast?(event: string): void } = {}) {}

  on(event: string, listener: Listener): this {
    const list = this.listeners.get(event)
    if (list) list.push(listener)
    else {
      this.listeners.set(event, [listener])
      this.watchers.onFirst?.(event)
    }
    return this
  }

  once(event: string, listener: Listener): this {
    const wrapper: Listener & { original?: Listener } = (...args) => {
      this.off(event, wrapper)
      listener(...args)
    }
    wrapper.original = listener
    return this.on(event, wrapper)
  }

  off(event: string, listener?: Listener): this {
    const list = this.listeners.get(event)
    if (!list) return this
    const index = list.findIndex(
      (entry) => entry === listener || (entry as { original?: Listener }).original === listener
    )
    if (listener === undefined) list.length = 0
    else if (index >= 0) list.splice(index, 1)
    if (list.length === 0) {
      this.listeners.delete(event)
      this.watchers.onLast?.(event)
    }
    return this
  }

  emit(event: string, ...args: unknown[]): boolean {
    const list = this.listeners.get(event)
    if (!list) return false
    for (const listener of [...list]) listener(...args)
    return true
  }

  listenerCount(event: string): number {
    return this.listeners.get(event)?.length ?? 0
  }
}
