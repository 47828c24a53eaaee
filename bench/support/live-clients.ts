import { feathers } from '@feathersjs/feathers'
import socketioClientModule from '@feathersjs/socketio-client'
import { rx } from 'feathers-reactive'
import { io as connectClient, type Socket } from 'socket.io-client'
import { applyChanges, diff, type WindowChange } from '../../src/domain/query/live-window.js'
import {
  compareLists,
  frameOf,
  ITEMS,
  shapeOfWatch,
  shapeQuery,
  watchesOfSocket,
  type Frame,
  type LiveScale,
  type Query
} from './live-workload.js'

type Doc = Record<string, unknown>

/** One live query a client holds: its query and its current list. */
interface Watch {
  query: Query
  list: Doc[]
}

export interface Verdicts {
  equal: number
  /** Same records, another order (queries without `$sort` only). */
  order: number
  /** A record missing, extra or stale. */
  wrong: number
  /** Of the wrong ones, the `$limit` windows. */
  wrongWindows: number
  /** Of the wrong ones, how many hold fewer records than a fresh `find` (a window that shrank). */
  short: number
}

const socketioClient = socketioClientModule.default
const CONNECT_CONCURRENCY = 50
const ASK_TIMEOUT_MS = 60_000

const now = () => performance.timeOrigin + performance.now()

function connect(url: string): Promise<Socket> {
  const socket = connectClient(url, { transports: ['websocket'], forceNew: true, reconnection: false })
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket))
    socket.once('connect_error', reject)
  })
}

/** A call with an ack; rejects when the socket is or gets disconnected, or after ASK_TIMEOUT_MS. */
function ask(socket: Socket, event: string, ...args: unknown[]): Promise<unknown> {
  if (!socket.connected) return Promise.reject(new Error(`${event}: the socket is disconnected`))
  return new Promise((resolve, reject) =>
    socket
      .timeout(ASK_TIMEOUT_MS)
      .emit(event, ...args, (timeout: unknown, error: unknown, result: unknown) =>
        timeout
          ? reject(new Error(`${event}: no answer within ${ASK_TIMEOUT_MS / 1000} s`))
          : error
            ? reject(new Error(`${event}: ${JSON.stringify(error)}`))
            : resolve(result)
      )
  )
}

/**
 * The sockets of one client process of `npm run bench:live` and their watches. `plumage`: socket.io-client speaking
 * the wire protocol's `watch` (docs/wire-protocol.md, Live queries), each `live` frame applied with `applyChanges`
 * as plumage's client does. `feathers`: per socket the Feathers client (@feathersjs/socketio-client) with
 * feathers-reactive (`service.watch().find({ query })`, its default 'smart' strategy: events matched in the
 * client). Every change a list takes is kept as a Frame (its time and its records) for the latency.
 */
export class LiveClientSet {
  readonly frames: Frame[] = []
  /** `live` frames naming a watch this client does not hold (none expected: the answer leaves before them). */
  unknownFrames = 0
  /** Sockets that dropped, by socket.io's reason (a client starved of CPU misses its pings: 'ping timeout'). */
  readonly drops = new Map<string, number>()
  private closing = false
  private readonly sockets: Socket[] = []
  private readonly watches: { socket: Socket; watch: Watch }[] = []
  private readonly stops: (() => void)[] = []

  constructor(
    readonly kind: 'plumage' | 'feathers',
    private readonly url: string,
    private readonly scale: Pick<LiveScale, 'queries' | 'sockets' | 'shapes' | 'window'>
  ) {}

  get watchCount(): number {
    return this.watches.length
  }

  /** Connects the sockets `indexes` (CONNECT_CONCURRENCY at a time), each with its watches and their first lists. */
  async open(indexes: number[]): Promise<void> {
    let next = 0
    const worker = async () => {
      while (next < indexes.length) await this.openSocket(indexes[next++]!)
    }
    await Promise.all(Array.from({ length: CONNECT_CONCURRENCY }, worker))
  }

  private async openSocket(index: number): Promise<void> {
    const socket = await connect(this.url)
    this.sockets.push(socket)
    socket.on('disconnect', (reason) => {
      if (!this.closing) this.drops.set(reason, (this.drops.get(reason) ?? 0) + 1)
    })
    const queries = watchesOfSocket(index, this.scale).map((q) => shapeQuery(shapeOfWatch(q, this.scale), this.scale))
    if (this.kind === 'plumage') await this.watchPlumage(socket, queries)
    else await this.watchFeathers(socket, queries)
  }

  private async watchPlumage(socket: Socket, queries: Query[]): Promise<void> {
    const byId = new Map<string, Watch>()
    socket.on('live', (frame: { id: string; changes: WindowChange[] }) => {
      const at = now()
      const watch = byId.get(frame.id)
      if (!watch) {
        this.unknownFrames++
        return
      }
      watch.list = applyChanges(watch.list, frame.changes)
      this.frames.push(frameOf(at, frame.changes))
    })
    await Promise.all(
      queries.map(async (query) => {
        const answer = (await ask(socket, 'watch', ITEMS, query, {})) as { id: string; records: Doc[] }
        const watch = { query, list: answer.records }
        byId.set(answer.id, watch)
        this.watches.push({ socket, watch })
      })
    )
  }

  private async watchFeathers(socket: Socket, queries: Query[]): Promise<void> {
    const app = feathers()
    app.configure(socketioClient(socket as never))
    app.configure(rx({ idField: 'id' }) as never)
    const service = app.service(ITEMS) as unknown as {
      watch(): { find(params: { query: Query }): { subscribe(next: (list: Doc[]) => void): { unsubscribe(): void } } }
    }
    await Promise.all(
      queries.map(
        (query) =>
          new Promise<void>((resolve) => {
            let watch: Watch | undefined
            const subscription = service
              .watch()
              .find({ query })
              .subscribe((list) => {
                const at = now()
                if (!watch) {
                  watch = { query, list }
                  this.watches.push({ socket, watch })
                  resolve()
                  return
                }
                const changes = diff(watch.list, list, 'id')
                watch.list = list
                if (changes.length > 0) this.frames.push(frameOf(at, changes))
              })
            this.stops.push(() => subscription.unsubscribe())
          })
      )
    )
  }

  /**
   * Every list against a fresh `find` of its query (VERIFY_CONCURRENCY at a time) on a new socket of this process (a
   * watch's own socket may have dropped): the same anonymous connection's answer.
   */
  async verify(): Promise<Verdicts> {
    const verdicts: Verdicts = { equal: 0, order: 0, wrong: 0, wrongWindows: 0, short: 0 }
    const checker = await connect(this.url)
    let next = 0
    const worker = async () => {
      while (next < this.watches.length) {
        const { watch } = this.watches[next++]!
        const fresh = (await ask(checker, 'find', ITEMS, watch.query)) as Doc[]
        const verdict = compareLists(watch.list, fresh)
        verdicts[verdict]++
        if (verdict !== 'wrong') continue
        if ('$limit' in watch.query) verdicts.wrongWindows++
        if (watch.list.length < fresh.length) verdicts.short++
      }
    }
    try {
      await Promise.all(Array.from({ length: CONNECT_CONCURRENCY }, worker))
    } finally {
      checker.disconnect()
    }
    return verdicts
  }

  close(): void {
    this.closing = true
    for (const stop of this.stops) stop()
    for (const socket of this.sockets) socket.disconnect()
  }
}
