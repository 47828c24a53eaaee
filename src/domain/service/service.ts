/** The service contract every service, transport and client speaks (Feathers-compatible). */
export type Id = string | number
export type NullableId = Id | null

export type Query = Record<string, unknown>

export interface PaginationOptions {
  default?: number
  max?: number
}

/** A connection of a real-time transport; channels group them. */
export interface Connection {
  provider: string
  headers?: Record<string, unknown>
  authentication?: AuthenticationRequest
  user?: Record<string, unknown>
  [key: string]: unknown
}

export interface AuthenticationRequest {
  strategy?: string
  accessToken?: string
  [key: string]: unknown
}

export interface Params {
  query?: Query
  /** 'rest', 'socketio' … for calls from a transport; undefined for internal calls. */
  provider?: string
  headers?: Record<string, unknown>
  route?: Record<string, string>
  user?: Record<string, unknown>
  authentication?: AuthenticationRequest
  authenticated?: boolean
  connection?: Connection
  /** `false` turns pagination off for one call; an object overrides the service option. */
  paginate?: false | PaginationOptions
  /** Adapter-specific members (e.g. `rethinkdb`) set by hooks, never by clients. */
  [key: string]: unknown
}

/**
 * One service call by meaning: which service, which method, and its arguments (where each sits among
 * a method's arguments is method-layout.ts). The one shape every layer passes a call in: a client
 * hands it to its transport, a server transport to its Gateway, and the app runs it through the hooks.
 */
export interface ServiceCall {
  /** The service path as registered (`users/:userId/posts`: placeholder values travel in `params.route`). */
  path: string
  /** 'find' | 'get' | 'create' | 'update' | 'patch' | 'remove' or a custom method name. */
  method: string
  id?: NullableId
  data?: unknown
  /** From a transport, `provider` names it: external calls reach only the service's exposed methods. */
  params: Params
}

export interface Paginated<T> {
  total: number
  /** Absent (as in Feathers) when neither `$limit` nor the service's default or max size bounds the page. */
  limit?: number
  skip: number
  data: T[]
}

/**
 * A page of a cursor walk: what a paginated find answers when its query names `$after`, `$before` or
 * `$count` (src/domain/query/cursor.ts). `next` and `prev` are the cursors of the following and the
 * preceding page (null at either end); `total` is absent when the query says `$count: false`.
 */
export interface CursorPage<T> extends Omit<Paginated<T>, 'total'> {
  total?: number
  next: string | null
  prev: string | null
}

export type Data = Record<string, unknown>

/** Every standard method is optional: a service implements the ones it offers. */
export interface ServiceMethods<T = Data> {
  find?(params?: Params): Promise<T[] | Paginated<T>>
  get?(id: Id, params?: Params): Promise<T>
  create?(data: Partial<T> | Partial<T>[], params?: Params): Promise<T | T[]>
  update?(id: NullableId, data: Partial<T>, params?: Params): Promise<T | T[]>
  patch?(id: NullableId, data: Partial<T>, params?: Params): Promise<T | T[]>
  remove?(id: NullableId, params?: Params): Promise<T | T[]>
  setup?(app: unknown, path: string): Promise<void> | void
  teardown?(app: unknown, path: string): Promise<void> | void
}

/**
 * A service with all six standard methods: what `app.service(path)` offers when the path's own type
 * is not known. Registering the service's type (see App) narrows this to the methods it really has.
 */
export interface Service<T = Data> {
  find(params?: Params): Promise<T[] | Paginated<T>>
  get(id: Id, params?: Params): Promise<T>
  create(data: Partial<T> | Partial<T>[], params?: Params): Promise<T | T[]>
  update(id: NullableId, data: Partial<T>, params?: Params): Promise<T | T[]>
  patch(id: NullableId, data: Partial<T>, params?: Params): Promise<T | T[]>
  remove(id: NullableId, params?: Params): Promise<T | T[]>
}
