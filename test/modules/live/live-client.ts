import type { Socket } from 'socket.io-client'
import type { Doc } from '../../../src/domain/query/field-getter.js'
import { applyChanges, type WindowChange } from '../../../src/domain/query/live-window.js'

export interface Frame {
  id: string
  offset?: string
  changes: WindowChange[]
}

/** How long a call waits for its answer (LIVE_CALL_TIMEOUT_MS: long oracle runs on a loaded machine). */
const CALL_TIMEOUT_MS = Number(process.env.LIVE_CALL_TIMEOUT_MS ?? 10_000)

/** A socket call: resolves with the result, rejects with the error envelope. */
export function call<T = unknown>(socket: Socket, event: string, ...args: unknown[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer to ${event} in ${CALL_TIMEOUT_MS} ms`)), CALL_TIMEOUT_MS)
    socket.emit(event, ...args, (error: unknown, result: T) => {
      clearTimeout(timer)
      if (error) reject(error as Error)
      else resolve(result)
    })
  })
}

/** The records a find answers (a page's data, or the array). */
export async function findRecords(socket: Socket, path: string, query: object): Promise<Doc[]> {
  const result = await call<Doc[] | { data: Doc[] }>(socket, 'find', path, query)
  return Array.isArray(result) ? result : result.data
}

/** One raw watch over a socket, as any socket.io client would keep it: the list after the ack and each frame. */
export class RawWatch {
  list: Doc[] = []
  frames: Frame[] = []
  id = ''
  offset?: string

  private constructor(private readonly socket: Socket) {}

  static async start(socket: Socket, path: string, query: object, options: object = {}): Promise<RawWatch> {
    const watch = new RawWatch(socket)
    const early: Frame[] = []
    const listener = (frame: Frame) => {
      if (!watch.id) early.push(frame)
      else if (frame.id === watch.id) watch.apply(frame)
    }
    socket.on('live', listener)
    const answer = await call<{ id: string; offset?: string; records: Doc[] }>(socket, 'watch', path, query, options)
    watch.id = answer.id
    watch.list = answer.records
    watch.offset = answer.offset
    for (const frame of early) if (frame.id === watch.id) watch.apply(frame)
    return watch
  }

  private apply(frame: Frame): void {
    this.frames.push(frame)
    this.list = applyChanges(this.list, frame.changes)
    if (frame.offset !== undefined) this.offset = frame.offset
  }

  unwatch(): Promise<unknown> {
    return call(this.socket, 'unwatch', this.id)
  }
}

/** Waits until `check` holds (polling every 10 ms, at most `ms`); answers whether it did. */
export async function until(check: () => boolean | Promise<boolean>, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return check()
}
