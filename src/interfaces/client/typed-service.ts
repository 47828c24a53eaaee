import type { LiveWatch } from './live-watch.js'
import type { CursorPage, Id, Paginated, Params, Query } from '../../domain/service/service.js'

/**
 * What a typed client knows about one service: types only, nothing of it exists at runtime. A record
 * of them by path (`{ messages: …, users: … }`) is what `createClient<Services>()` takes; schema-types.ts
 * builds one from the schemas a service is registered with, so client and server share one source.
 *
 * - `result`: one record as the service returns it;
 * - `data`: the body of create and update (default: a partial record);
 * - `patch`: the body of patch (default: a partial `data`);
 * - `query`: the fields a query may name, with their types (default: the record's);
 * - `paginate`: `true` when the service pages `find` (`paginate` on the server), `false` when it answers
 *   arrays; left out, `find` answers either;
 * - `methods`: custom methods as `name(data): result`, e.g. `Pick<TodosService, 'archive'>`;
 * - `events`: custom events and their payloads (`{ typing: { userId: Id } }`).
 *
 * The types are plain mapped and conditional types over this record, evaluated once per service the
 * client uses: nothing is inferred recursively from the schemas here.
 */
export interface ServiceTypes {
  result: object
  data?: object
  patch?: object
  query?: object
  paginate?: boolean
  methods?: object
  events?: object
}

export type ResultOf<S extends ServiceTypes> = S['result']
export type DataOf<S extends ServiceTypes> = S extends { data: infer D } ? D : Partial<S['result']>
export type PatchOf<S extends ServiceTypes> = S extends { patch: infer P } ? P : Partial<DataOf<S>>
type FieldsOf<S extends ServiceTypes> = S extends { query: infer Q } ? Q : S['result']

/** The operators one field takes (README "Query syntax"). */
export interface FieldOperators<V> {
  $in?: V[]
  $nin?: V[]
  $lt?: V
  $lte?: V
  $gt?: V
  $gte?: V
  $ne?: V
  $search?: string
  $contains?: unknown
}

/** Criteria on the queryable fields: a value (equality) or operators. */
export type FieldCriteria<F> = { [K in keyof F]?: F[K] | FieldOperators<F[K]> }

/**
 * The parameters of a cursor walk (src/domain/query/cursor.ts): `$after` / `$before` a page's `next` /
 * `prev` ('' for the first / last page), `$count: false` to leave `total` out. Only a paginated find takes
 * them (the server answers 400 otherwise), so a service typed `paginate: false` has none.
 */
export interface CursorQuery {
  $after?: string
  $before?: string
  $count?: boolean
}
type CursorQueryOf<S extends ServiceTypes> = S extends { paginate: false } ? unknown : CursorQuery

/**
 * A query a client may send to a service: criteria on its query fields plus the `$` parameters. The `$`
 * parameters are plumage's, not the query schema's: a schema with `additionalProperties: false` still takes them.
 */
export type QueryOf<S extends ServiceTypes> = FieldCriteria<FieldsOf<S>> &
  CursorQueryOf<S> & {
    $limit?: number
    $skip?: number
    $sort?: { [K in keyof FieldsOf<S>]?: 1 | -1 }
    $select?: Extract<keyof S['result'], string>[]
    $or?: FieldCriteria<FieldsOf<S>>[]
    $and?: FieldCriteria<FieldsOf<S>>[]
  }

/** A query that names a cursor parameter, so that find answers a CursorPage; none on a service of arrays. */
type CursorWalkOf<S extends ServiceTypes> = S extends { paginate: false }
  ? never
  : { $after: string } | { $before: string } | { $count: boolean }

/**
 * A query naming no cursor parameter: the first `find` overload, the one most calls take, so the compiler
 * settles them without trying (and failing) the cursor overload first.
 */
interface NoCursor {
  $after?: undefined
  $before?: undefined
  $count?: undefined
}

/** Params of a typed call: those of the untyped client, with the query typed. */
export interface ClientParams<Q extends Query = Query> extends Params {
  query?: Q
}

/** What `find` answers: pages when the service paginates, arrays when it does not, either when unknown. */
export type FindResult<S extends ServiceTypes> = S extends { paginate: true }
  ? Paginated<ResultOf<S>>
  : S extends { paginate: false }
    ? ResultOf<S>[]
    : ResultOf<S>[] | Paginated<ResultOf<S>>

/** What `find` answers to a query naming `$after`, `$before` or `$count`: a cursor page, or an array when unknown. */
export type CursorFindResult<S extends ServiceTypes> = S extends { paginate: true }
  ? CursorPage<ResultOf<S>>
  : ResultOf<S>[] | CursorPage<ResultOf<S>>

/** The events every service sends, each with one record. */
export type StandardEvent = 'created' | 'updated' | 'patched' | 'removed'

/** The standard events carry one record each; custom events carry what `events` declares. */
export type EventsOf<S extends ServiceTypes> = {
  created: ResultOf<S>
  updated: ResultOf<S>
  patched: ResultOf<S>
  removed: ResultOf<S>
} & (S extends { events: infer E } ? E : unknown)

type MethodsOf<S extends ServiceTypes> = S extends { methods: infer M } ? M : Record<never, never>

/** Custom methods as the client calls them: `(data, params)`, resolving with the declared result. */
export type CustomMethodsOf<S extends ServiceTypes, N extends keyof MethodsOf<S>> = {
  [K in N]: MethodsOf<S>[K] extends (data: infer D, ...rest: never[]) => infer R
    ? (data: D, params?: ClientParams) => Promise<Awaited<R>>
    : never
}

/**
 * A service as a typed client sees it: the runtime object is the same RemoteService (remote-service.ts)
 * the untyped client hands out; only its signatures are narrowed to the service's types. `create`,
 * `patch` and `remove` answer one record for one (an id) and an array for many (an array, a `null` id).
 */
export interface TypedService<S extends ServiceTypes> {
  readonly path: string
  find(params?: ClientParams<QueryOf<S> & NoCursor>): Promise<FindResult<S>>
  find(params: ClientParams<QueryOf<S> & CursorWalkOf<S>>): Promise<CursorFindResult<S>>
  /**
   * Every record the query matches, page after page by cursor (RemoteService.iterate), as
   * `for await (const message of messages.iterate({ $sort: { createdAt: -1 } }))`.
   */
  iterate(query?: QueryOf<S>, params?: ClientParams): AsyncIterable<ResultOf<S>>
  /** The query's result kept up to date by the server (RemoteService.watch, live queries). */
  watch(options?: { query?: QueryOf<S> }): LiveWatch<ResultOf<S>>
  get(id: Id, params?: ClientParams<QueryOf<S>>): Promise<ResultOf<S>>
  create(data: DataOf<S>, params?: ClientParams<QueryOf<S>>): Promise<ResultOf<S>>
  create(data: DataOf<S>[], params?: ClientParams<QueryOf<S>>): Promise<ResultOf<S>[]>
  update(id: Id, data: DataOf<S>, params?: ClientParams<QueryOf<S>>): Promise<ResultOf<S>>
  patch(id: Id, data: PatchOf<S>, params?: ClientParams<QueryOf<S>>): Promise<ResultOf<S>>
  patch(id: null, data: PatchOf<S>, params?: ClientParams<QueryOf<S>>): Promise<ResultOf<S>[]>
  remove(id: Id, params?: ClientParams<QueryOf<S>>): Promise<ResultOf<S>>
  remove(id: null, params?: ClientParams<QueryOf<S>>): Promise<ResultOf<S>[]>
  /** Adds custom methods the service's types declare (REST: POST with `X-Service-Method: name`). */
  methods<N extends keyof MethodsOf<S> & string>(...names: N[]): this & CustomMethodsOf<S, N>
  /*
   * The standard events first, with no type parameter to infer (a quarter of the compiler's work per
   * listener); custom events through the generic overloads.
   */
  on(event: StandardEvent, listener: (record: ResultOf<S>) => void): this
  on<E extends keyof EventsOf<S> & string>(event: E, listener: (payload: EventsOf<S>[E]) => void): this
  once(event: StandardEvent, listener: (record: ResultOf<S>) => void): this
  once<E extends keyof EventsOf<S> & string>(event: E, listener: (payload: EventsOf<S>[E]) => void): this
  off(event: StandardEvent, listener?: (record: ResultOf<S>) => void): this
  off<E extends keyof EventsOf<S> & string>(event: E, listener?: (payload: EventsOf<S>[E]) => void): this
  listenerCount(event: keyof EventsOf<S> & string): number
}
