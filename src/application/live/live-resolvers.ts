import type { Doc } from '../../domain/query/field-getter.js'
import type { EventHistory, RecordedEvent } from '../../domain/realtime/event-history.js'
import type { Connection } from '../../domain/service/service.js'
import type { App } from '../app.js'
import { coreOf } from '../app-core.js'
import { eventContext, runResolvers, type EventResolvers } from '../event-stages.js'
import { shareLoaders } from '../resolvers/index.js'
import type { LiveView } from './live-view.js'
import { concerning, replaySource, type ReplaySource } from './replay.js'
import { idFieldOf, rulesOf } from './watch-options.js'

/** A write offered to views: each with the record as its rules show it (none: the view drops it). */
export type Offers = (readonly [LiveView, Doc | undefined])[]

/** The resolvers (`resolveResult`, `resolveExternal`) a service's events pass, or none. */
export function eventResolversOf(app: App, path: string): EventResolvers | undefined {
  const core = coreOf(app)
  const entry = core.registry.get(path)
  const resolvers = entry && core.pipeline.eventResolvers(entry)
  return resolvers && resolvers.result.length + resolvers.external.length > 0 ? resolvers : undefined
}

/**
 * The offers with their records resolved as a `find` by the views' watchers resolves them: once per rule set (the
 * views of a rule set see the same record), with the context of one of its watchers' connections. A rule set whose
 * resolution fails (its watcher's login lapsed) leaves its views out, as `failed`, and the others go on.
 */
export async function resolveOffers(
  app: App,
  path: string,
  event: string,
  offers: Offers,
  readerOf: (view: LiveView) => Connection | undefined
): Promise<{ offers: Offers; failed: LiveView[] }> {
  const resolvers = eventResolversOf(app, path)
  const entry = coreOf(app).registry.get(path)
  if (!resolvers || !entry) return { offers, failed: [] }
  const groups = new Map<string, Promise<Doc | typeof FAILED>>()
  const resolved = offers.map(([view, record]) => {
    if (!record) return Promise.resolve([view, record] as const)
    const group = view.key.split('\n')[1]!
    let done = groups.get(group)
    if (!done) {
      const context = () => eventContext(app, entry, event, record, readerOf(view))
      const result = runResolvers(resolvers.result, record, context)
      done = result.then((data) => runResolvers(resolvers.external, data, context) as Promise<Doc>)
      groups.set(group, (done = done.catch(() => FAILED)))
    }
    return done.then((data) => [view, data] as const)
  })
  const all = await Promise.all(resolved)
  const failed = all.flatMap(([view, data]) => (data === FAILED ? [view] : []))
  return { offers: all.filter((offer): offer is readonly [LiveView, Doc | undefined] => offer[1] !== FAILED), failed }
}

const FAILED = Symbol('failed')

/**
 * A resumed watch's replay source with the missed events' records resolved for its connection, as its `find`
 * resolves them (resolved before the replay: replay.ts reads records synchronously). Only records the view's query
 * accepts are resolved (as the feed offers a write only to the views its record's anchors reach): the others leave
 * or never enter the list either way. They are resolved all at once with the loaders of one context shared, as the
 * records of one `find` are: a users lookup per missed event, one after another, was what made a resume on a loaded
 * machine take seconds (a quiet watch's offset is old, so it misses every write of the service since).
 */
export async function resolveReplay(
  app: App,
  path: string,
  source: ReplaySource,
  events: readonly RecordedEvent[],
  connection: Connection
): Promise<ReplaySource> {
  const resolvers = eventResolversOf(app, path)
  const entry = coreOf(app).registry.get(path)
  if (!resolvers || !entry) return source
  // One context's loaders, shared by every event's context below.
  const scope = eventContext(app, entry, 'created', undefined, connection)
  const resolved = new Map<RecordedEvent, ReturnType<ReplaySource['record']>>()
  const resolving = events.map(async (event) => {
    const write = source.record(event)
    if (!write?.record || !source.window.accepts(write.record)) return
    const context = () => {
      const made = eventContext(app, entry, event.event, write.record, connection)
      shareLoaders(scope, made)
      return made
    }
    const data = await runResolvers(resolvers.result, write.record, context)
    resolved.set(event, { id: write.id, record: (await runResolvers(resolvers.external, data, context)) as Doc })
  })
  await Promise.all(resolving)
  return { ...source, record: (event) => (resolved.has(event) ? resolved.get(event) : source.record(event)) }
}

/**
 * A resumed watch's missed events (ADR 0019, Resume): those after the client's offset up to the one the view last
 * applied, and the replay's source with their records resolved for the connection; undefined past the history.
 */
export async function missedEvents(
  app: App,
  history: EventHistory,
  view: LiveView,
  resume: { offset: string; records: Doc[] },
  connection: Connection
): Promise<{ events: RecordedEvent[]; source: ReplaySource } | undefined> {
  if (resume.offset === '') return undefined
  const { path } = view
  const idField = idFieldOf(app, path)
  let since: RecordedEvent[] | 'unknown' = 'unknown'
  // The events up to the one the view last applied (a later one may have come in while the history answered).
  for (let tries = 0; tries < 3; tries++) {
    const concerns = concerning(view, idField, resume.records)
    since = await (history.sinceFor?.(resume.offset, [path], concerns) ?? history.since(resume.offset))
    if (since === 'unknown' || [resume.offset, undefined].includes(view.current)) break
    if (since.some((event) => event.offset === view.current)) break
  }
  if (since === 'unknown') return undefined
  const original = (data: unknown) => rulesOf(app)?.original(data) ?? data
  const source = replaySource(view, idField, original)
  // Missed records resolved as this connection's find resolves them (the last frame ends on the view's list).
  return { events: since, source: await resolveReplay(app, path, source, since, connection) }
}
