import { BadRequest } from '../../domain/errors/errors.js'
import { layoutOf } from '../../domain/service/method-layout.js'
import type { CursorPage, Data, Id, NullableId, Paginated, Params, Query } from '../../domain/service/service.js'
import type { ClientApp, ClientHookContext } from './client-app.js'
import { Emitter } from './emitter.js'
import { fenceTransportOf, OFFSET_QUERY } from './fence/write-fence.js'
import { LiveWatch, liveTransportOf } from './live-watch.js'
import { writeOffsets } from './transport.js'

const RECORD_EVENTS = new Set(['created', 'updated', 'patched', 'removed'])

type CustomMethods<N extends string> = Record<N, (data?: unknown, params?: Params) => Promise<unknown>>

/**
 * A service on the server, as the client sees it: the six methods (same signatures as on the
 * server), custom methods added with `methods(...)`, and events. With a real-time transport the
 * events come from the server; otherwise each own create/update/patch/remove emits locally, one
 * event per record (docs/wire-protocol.md, Events).
 */
export class RemoteService<T = Data> extends Emitter {
  private readonly subscriptions = new Map<string, () => void>()

  constructor(
    readonly path: string,
    private readonly app: ClientApp
  ) {
    super({ onFirst: (event) => this.subscribe(event), onLast: (event) => this.unsubscribe(event) })
  }

  find(params: Params = {}): Promise<T[] | Paginated<T>> {
    return this.call('find', undefined, undefined, params) as Promise<T[] | Paginated<T>>
  }

  /**
   * Every record `find` matches for `query`, page after page by cursor (`$after` each page's `next`), as
   * `for await (const message of messages.iterate({ $sort: { createdAt: -1 } }))`. Pages leave the count
   * out (`$count: false`, unless the query says otherwise); records created or removed during the walk never
   * make one repeat or go missing. Needs a paginated service on a plumage server.
   */
  async *iterate(query: Query = {}, params: Params = {}): AsyncGenerator<T, void, undefined> {
    let cursor: string | null = ''
    while (cursor !== null) {
      const page = await this.find({ ...params, query: { $count: false, ...query, $after: cursor } })
      if (Array.isArray(page) || !('next' in page))
        throw new BadRequest(`Service '${this.path}' answered no cursor page: iterate needs a paginated find`)
      yield* (page as CursorPage<T>).data
      cursor = (page as CursorPage<T>).next
    }
  }

  /**
   * The result of `find` for `query`, kept up to date by the server (live queries; a socket.io transport): an
   * async iterable of the current list, with 'change' events and `unwatch()` (live-watch.ts).
   */
  watch({ query = {} }: { query?: Query } = {}): LiveWatch<T> {
    return new LiveWatch<T>(this.app, liveTransportOf(this.app), this.path, query)
  }

  get(id: Id, params: Params = {}): Promise<T> {
    return this.call('get', id, undefined, params) as Promise<T>
  }

  create(data: Partial<T>, params?: Params): Promise<T>
  create(data: Partial<T>[], params?: Params): Promise<T[]>
  create(data: Partial<T> | Partial<T>[], params: Params = {}): Promise<T | T[]> {
    return this.call('create', undefined, data, params) as Promise<T | T[]>
  }

  update(id: Id, data: Partial<T>, params: Params = {}): Promise<T> {
    return this.call('update', id, data, params) as Promise<T>
  }

  patch(id: NullableId, data: Partial<T>, params: Params = {}): Promise<T | T[]> {
    return this.call('patch', id, data, params) as Promise<T | T[]>
  }

  remove(id: NullableId, params: Params = {}): Promise<T | T[]> {
    return this.call('remove', id, undefined, params) as Promise<T | T[]>
  }

  /** Adds custom methods `name(data, params)` (REST: POST with `X-Service-Method: name`). */
  methods<N extends string>(...names: N[]): this & CustomMethods<N> {
    const self = this as unknown as Record<string, unknown>
    for (const name of names)
      self[name] = (data?: unknown, params: Params = {}) => this.call(name, undefined, data, params)
    return this as this & CustomMethods<N>
  }

  /** Re-attaches wire subscriptions after the app's transport changed. */
  resubscribe(): void {
    for (const unsubscribe of this.subscriptions.values()) unsubscribe()
    const events = [...this.subscriptions.keys()]
    this.subscriptions.clear()
    for (const event of events) this.subscribe(event)
  }

  private async call(method: string, id: NullableId | undefined, data: unknown, params: Params): Promise<unknown> {
    // Feathers' client-side check: a missing id is a caller bug, answered without a request.
    // get(null) would turn into a find on the collection URL; update(null) is left to the server's 400.
    const layout = layoutOf(method)
    if (layout.id && (id === undefined || id === '' || (id === null && method === 'get'))) {
      throw new BadRequest(`id for .${method} is required`)
    }
    // Read your writes: a write to a service this client watches asks for its event offset and waits for its views.
    const fence = layout.event && this.app.fence.watches(this.path) ? this.app.fence : undefined
    if (fence) params = { ...params, query: { ...params.query, [OFFSET_QUERY]: true } }
    const context: ClientHookContext = { app: this.app, path: this.path, method, id, data, params }
    const result = await this.app.request(context)
    const offset = fence && writeOffsets.get(context.params)
    if (offset) await fence.wait(this.path, offset, result)
    const event = layout.event
    if (event && !this.app.transport?.subscribe && result !== null && result !== undefined) {
      for (const record of Array.isArray(result) ? result : [result]) this.emit(event, record, context)
    }
    return result
  }

  private subscribe(event: string): void {
    const subscribe = this.app.transport?.subscribe
    if (!subscribe) return void this.subscriptions.set(event, () => {})
    const off = subscribe.call(this.app.transport, this.path, event, (data) => this.emit(event, data))
    // A listener of record events is a view of this service for read your writes.
    const transport = RECORD_EVENTS.has(event) ? fenceTransportOf(this.app) : undefined
    const removeView = transport ? this.app.fence.add(this.path, transport) : undefined
    this.subscriptions.set(event, removeView ? () => (off(), removeView()) : off)
  }

  private unsubscribe(event: string): void {
    this.subscriptions.get(event)?.()
    this.subscriptions.delete(event)
  }
}
