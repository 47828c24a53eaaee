import { BadRequest, TooManyRequests } from '../../domain/errors/errors.js'
import type { Doc } from '../../domain/query/field-getter.js'
import type { EventHistory, PublishedEvent } from '../../domain/realtime/event-history.js'
import type { Connection, Query } from '../../domain/service/service.js'
import { isPlainObject } from '../../domain/objects.js'
import type { App } from '../app.js'
import { coreOf } from '../app-core.js'
import type { AppExtension } from '../extensions.js'
import { eventResolversOf, missedEvents, resolveOffers, type Offers } from './live-resolvers.js'
import {
  idFieldOf,
  planWatch,
  rawQuery,
  resumeOf,
  rulesOf,
  type Plan,
  type WatchAnswer,
  type WatchRequest
} from './watch-options.js'
import { changesBetween, LiveView, type Watch } from './live-view.js'
import { ConnectionProgress, DEFAULT_PROGRESS, type FeedPoint, type ProgressOptions } from './progress.js'
import { RECORD_EVENTS, replay } from './replay.js'
import { Views, type Filed } from './views.js'
import { WriteQueues, type FeedPosition } from './write-queues.js'

export interface LiveQueriesOptions {
  /** Watches one connection may hold (LIVE_MAX_WATCHES). */
  maxWatches: number
  /** Records a view keeps beyond its window, so that removals refill it without a read (default: the window's size). */
  buffer?: number
  /** The app's event history, when it keeps one: a watch resumes from an offset within it. */
  history?: EventHistory
  /** Reports a view whose refill failed (it reads again a second later). */
  failed?: (error: unknown) => void
  /** When a connection is told how far its quiet watches are current (default DEFAULT_PROGRESS). */
  progress?: ProgressOptions
  /** How long a view outlives its last watch (ms, default 10 s): a watch resumed meanwhile finds it current. */
  keepViewsMs?: number
}

/** A watch with what it was made from: its view changes when its user's rules do. */
interface Held {
  watch: Watch
  view: LiveView
  path: string
  raw: Query
  find: (query: Query) => Promise<unknown>
  user: unknown
  connection: Connection
  /** The events observed up to the last frame it was sent (progress.ts). */
  sent: number
  send: WatchRequest['send']
}

/** How long a fence waits for this process to follow the log to an offset (the client's own wait is 5 s). */
const FENCE_WAIT_MS = 5_000
const NOT_CRITERIA = ['$select', '$skip', '$limit']
/** How long a view outlives its last watch by default. */
const KEEP_VIEWS_MS = 10_000

/**
 * Live queries (README "Live queries", ADR 0019): a connection watches a query and is sent every change of its
 * result. Identical watches — same service, query and rule set — share one LiveView; the app's published events
 * (observed in the order they are published, with their offsets) are matched to views through a QueryIndex of
 * their equality anchors, plus the views that hold the written record, then through each view's rules.
 */
export class LiveQueries implements AppExtension {
  private readonly views: Views
  private readonly held = new Map<Connection, Map<string, Held>>()
  /** The user each connection's watches were last planned for: a write checks one pointer per connection. */
  private readonly users = new Map<Connection, unknown>()
  /** Each watch's entry: a view reads as one of its watchers. */
  private readonly readers = new WeakMap<Watch, Held>()
  private readonly lastReaders = new WeakMap<LiveView, Connection>()
  private head: string | undefined
  /** Events observed so far. */
  private observed = 0
  private readonly progress: ConnectionProgress<Connection>
  private readonly progressTimer?: ReturnType<typeof setInterval>
  private readonly writes = new WriteQueues()
  private sequence = 0

  constructor(
    private readonly app: App,
    private readonly options: LiveQueriesOptions
  ) {
    this.views = new Views(options.keepViewsMs ?? KEEP_VIEWS_MS)
    app.on('disconnect', (connection: Connection) => this.release(connection))
    const changed = (_result: unknown, meta?: { connection?: Connection }) =>
      meta?.connection && this.recheck(meta.connection)
    app.on('login', changed)
    app.on('logout', changed)
    const progress = options.progress ?? DEFAULT_PROGRESS
    this.progress = new ConnectionProgress(progress)
    if (progress.everyMs > 0) {
      this.progressTimer = setInterval(() => this.tellProgress(), progress.everyMs)
      this.progressTimer.unref()
    }
  }

  async teardown(): Promise<void> {
    clearInterval(this.progressTimer)
    this.views.clear()
  }

  /** How many views have watches and how many are kept idle, the watches, and the records views hold (/metrics). */
  get size(): Views['size'] {
    return this.views.size
  }

  /** Starts a watch; answers it through `request.answer` once it is live (throws an error to answer instead). */
  async watch(request: WatchRequest): Promise<void> {
    const { connection, path } = request
    const held = this.held.get(connection) ?? new Map<string, Held>()
    if (held.size >= this.options.maxWatches)
      throw new TooManyRequests(
        `Too many live queries on this connection (limit ${this.options.maxWatches}); unwatch some first`
      )
    const raw = rawQuery(request.query)
    const resume = resumeOf(request.options)
    let plan: Plan
    try {
      plan = planWatch(this.app, connection, path, raw)
    } catch (error) {
      // The same answer `find` gives a query it refuses, when it refuses it first.
      await request.find(raw)
      throw error
    }
    const id = `${++this.sequence}`
    const send = request.send
    // A frame is stamped with its event's count, or the count its service's views are current at (an upper bound).
    const stamp = () => this.writes.offering ?? this.pointOf(path).count
    const watch: Watch = { id, send: (frame) => ((entry.sent = stamp()), send(frame)) }
    const { find } = request
    const entry: Held = { watch, view: undefined!, path, raw, find, user: connection.user, connection, sent: 0, send }
    entry.view = this.join(plan, path, entry)
    held.set(id, entry)
    this.held.set(connection, held)
    if (!this.users.has(connection)) this.users.set(connection, connection.user)
    try {
      await entry.view.ready
    } catch (error) {
      // A view whose first read failed is not kept: the next watch reads again.
      entry.view.watches.delete(entry.watch)
      this.views.drop(entry.view)
      if (!this.held.get(connection)?.delete(id)) return // let go of while its read ran: no one to answer
      if (held.size === 0) this.forget(connection)
      throw error
    }
    const view = entry.view
    const history = this.options.history
    // A history that cannot answer yet (this instance is behind the offset) fails the resume: the client resends it.
    const missed =
      resume &&
      history &&
      (await missedEvents(this.app, history, view, resume, connection).catch((error: unknown) => {
        if (this.held.get(connection)?.has(id)) this.end(connection, held, entry)
        throw error
      }))
    if (!this.held.get(connection)?.has(id)) return // unwatched or disconnected meanwhile
    watch.list = view.list
    entry.sent = this.pointOf(path).count
    const offset = view.current
    if (resume && missed) {
      // Each missed change as its own frame, after the answer: the client's list stands at its offset.
      request.answer({ id, offset: resume.offset, changes: [] })
      const frames = replay({ ...missed.source, list: view.list, until: offset }, resume.records, missed.events)
      for (const frame of frames) request.send({ id, ...frame })
      // The list now stands where the view does. Without this frame a quiet watch kept the offset it resumed from:
      // a client cut more often than progress frames come resumed from one old offset until it left the history.
      if (offset !== undefined && (frames.at(-1)?.offset ?? resume.offset) !== offset)
        request.send({ id, offset, changes: [] })
      return
    }
    const answer: WatchAnswer = resume ? { id, records: view.list, reset: true } : { id, records: view.list }
    request.answer(offset === undefined ? answer : { ...answer, offset })
  }

  /**
   * Read your writes (ADR 0020): resolves once every event up to `offset` was handed to the transports (this process
   * followed the log that far, within 5 s) and every view this connection watches applied them; `reached` is false
   * when the history could not place the offset or did not reach it.
   */
  async fence(connection: Connection, offset: string): Promise<{ reached: boolean }> {
    const reached = (await this.options.history?.reached?.(offset, FENCE_WAIT_MS)) ?? false
    await coreOf(this.app).serviceEvents.idle()
    // Writes of services with event resolvers wait in a queue per service before they reach views.
    await this.writes.idle()
    const held = this.held.get(connection)
    if (held) await Promise.all([...held.values()].map((entry) => entry.view.settled()))
    return { reached }
  }

  /** Ends a watch of this connection. */
  unwatch(connection: Connection, id: unknown): { id: string } {
    const held = this.held.get(connection)
    const entry = typeof id === 'string' || typeof id === 'number' ? held?.get(String(id)) : undefined
    if (!held || !entry) throw new BadRequest(`No live query '${String(id)}' on this connection`)
    this.end(connection, held, entry)
    return { id: entry.watch.id }
  }

  private end(connection: Connection, held: Map<string, Held>, entry: Held): void {
    held.delete(entry.watch.id)
    if (held.size === 0) this.forget(connection)
    this.leave(entry)
  }

  /** Frees every watch of a connection that went away. */
  release(connection: Connection): void {
    const held = this.held.get(connection)
    if (!held) return
    this.forget(connection)
    for (const entry of held.values()) this.leave(entry)
  }

  /** The change feed: every published event, in order (AppExtension.observe). */
  observe(event: PublishedEvent, offset: string | undefined): void {
    const before = this.head
    this.observed++
    if (offset !== undefined) this.head = offset
    if (!RECORD_EVENTS.has(event.event)) return
    const views = this.views.paths.get(event.path)
    if (views) this.dispatch(event, offset, before, views)
    // A user's record changed: rules' followUsers gave its connections the new one (only users' writes can).
    if ((event.event === 'patched' || event.event === 'updated') && event.path === rulesOf(this.app)?.users)
      for (const connection of this.held.keys()) this.recheck(connection)
  }

  /**
   * Hands a write to the views its record's anchors file it under and to the views that hold it: nothing else is
   * visited. A created record is new, so no view holds it yet; a view's entry among the holders is touched only when
   * the write made it take or drop the record.
   */
  private dispatch(event: PublishedEvent, offset: string | undefined, before: string | undefined, filed: Filed): void {
    const record = rulesOf(this.app)?.original(event.data) ?? event.data
    if (!isPlainObject(record)) return
    const path = event.path
    if (!this.writes.has(path) && !eventResolversOf(this.app, path))
      return this.offer(this.offers(record, event, filed), offset, filed)
    // A service with event resolvers: each write's records are resolved once per rule set, then offered in order.
    const count = this.observed
    const run = async () => {
      const offers = this.offers(record, event, filed)
      const readerOf = (view: LiveView) =>
        this.readers.get([...view.watches][0]!)?.connection ?? this.lastReaders.get(view)
      const resolved = await resolveOffers(this.app, path, event.event, offers.offers, readerOf)
      this.writes.stamped(count, () => this.offer({ ...offers, offers: resolved.offers }, offset, filed))
      // A view whose record could not be resolved reads its query again (an idle one is dropped instead).
      for (const view of resolved.failed)
        if (view.watches.size === 0) this.views.drop(view)
        else view.resync()
    }
    this.writes.add(path, before, count, run, (error) => this.options.failed?.(error))
  }

  /** The point of the feed the views of a service are current at (WriteQueues). */
  private pointOf(path: string): FeedPosition {
    return this.writes.point(path, { offset: this.head, count: this.observed })
  }

  /** The views a write reaches (its anchors', and those that hold its record), each with the record it sees. */
  private offers(record: Doc, event: PublishedEvent, { index, holders, idField, reading }: Filed) {
    const id = record[idField]
    const holding = event.event === 'created' ? undefined : holders.of(id)
    const candidates = index.candidates(record)
    if (holding) for (const view of holding) candidates.add(view)
    // A view reading may be about to hold the record (Filed.reading).
    for (const view of reading) candidates.add(view)
    const removed = event.event === 'removed'
    const offers: Offers = [...candidates].map((view) => [view, removed ? undefined : view.visible(record)])
    return { id, holding, offers }
  }

  private offer({ id, holding, offers }: ReturnType<LiveQueries['offers']>, offset: string | undefined, filed: Filed) {
    for (const [view, visible] of offers) {
      view.offer(id, visible, offset)
      if (view.holds(id) !== (holding?.has(view) ?? false)) filed.holders.update(view, id)
    }
  }

  /** The view of this plan (made, and filed for the feed, before its first read), with this watch in it. */
  private join(plan: Plan, path: string, entry: Held): LiveView {
    let view = this.views.get(plan.key)
    if (!view) {
      view = new LiveView(
        plan.key,
        path,
        plan.query,
        this.idField(path),
        this.options.buffer ?? plan.query.limit ?? 0,
        {
          read: (limit) => this.read(view!, limit),
          // While writes of its service are queued, the view is current just before the first of them.
          head: () => this.pointOf(path).offset,
          held: (ids) => this.views.filed(view!) && this.views.paths.get(path)?.holders.add(view!, ids),
          reading: (busy) => this.views.reading(view!, busy),
          drop: () => this.views.drop(view!)
        },
        (error) => this.options.failed?.(error)
      )
      view.ready.catch(() => undefined)
      view.visible = plan.visible
      this.views.add(view, plan.query.filter, this.idField(path))
    }
    this.views.wake(view)
    view.watches.add(entry.watch)
    this.readers.set(entry.watch, entry)
    return view
  }

  /** A view's read, as the `find` of one of its watchers. */
  private async read(view: LiveView, limit: number | undefined): Promise<Doc[]> {
    const reader = [...view.watches].map((watch) => this.readers.get(watch)).find((entry) => entry !== undefined)
    if (!reader) throw new Error('A live view without watchers cannot read')
    const query: Query = { ...reader.raw, $skip: 0 }
    for (const key of NOT_CRITERIA) if (key !== '$skip') delete query[key]
    if (limit !== undefined) query.$limit = limit
    const result = await reader.find(query)
    return (Array.isArray(result) ? result : ((result as { data?: Doc[] }).data ?? [])) as Doc[]
  }

  private leave(entry: Held): void {
    entry.view.watches.delete(entry.watch)
    // A view kept idle resolves the records it is offered as its last watcher would (its rule set's).
    if (entry.view.watches.size === 0) this.lastReaders.set(entry.view, { ...entry.connection })
    this.views.left(entry.view)
  }

  /**
   * A connection's user may have changed (a login, a logout, its record patched: rules' followUsers): each of its
   * watches whose rule set changed moves to the view of its new rules, and is sent the changes between the two.
   */
  private recheck(connection: Connection): void {
    const held = this.held.get(connection)
    if (!held || this.users.get(connection) === connection.user) return
    this.users.set(connection, connection.user)
    for (const entry of held.values()) {
      if (entry.user === connection.user) continue
      entry.user = connection.user
      let plan: Plan
      try {
        plan = planWatch(this.app, connection, entry.path, entry.raw)
      } catch {
        continue
      }
      if (plan.key !== entry.view.key) void this.move(entry, plan)
    }
  }

  private forget(connection: Connection): void {
    this.held.delete(connection)
    this.users.delete(connection)
    this.progress.forget(connection)
  }

  /** Progress frames (progress.ts): `{ offset }` to a connection whose quiet watches lag, or one per watch. */
  private tellProgress(): void {
    const current = (entry: Held): FeedPoint | undefined => {
      if (entry.watch.list === undefined || entry.view.busy) return undefined
      const point = this.pointOf(entry.path)
      return point.offset === undefined ? undefined : (point as FeedPoint)
    }
    this.progress.tell(
      this.held,
      this.observed,
      current,
      (_, held, { offset }) => held.values().next().value!.send({ offset }),
      (entry, { offset }) => entry.send({ id: entry.watch.id, offset, changes: [] })
    )
  }

  private async move(entry: Held, plan: Plan): Promise<void> {
    const before = entry.watch.list ?? []
    entry.watch.list = undefined
    // Not kept idle: its watcher's user is no longer of its rule set, and it would resolve writes as that user.
    entry.view.watches.delete(entry.watch)
    this.views.drop(entry.view)
    const view = (entry.view = this.join(plan, entry.path, entry))
    try {
      await view.ready
    } catch (error) {
      return this.options.failed?.(error)
    }
    if (entry.view !== view || !view.watches.has(entry.watch)) return
    entry.watch.list = view.list
    const changes = changesBetween(before, view.list, this.idField(entry.path))
    const offset = view.current
    if (changes.length > 0)
      entry.watch.send(offset === undefined ? { id: entry.watch.id, changes } : { id: entry.watch.id, offset, changes })
  }

  private idField(path: string): string {
    return idFieldOf(this.app, path)
  }
}
