/**
 * The part of node-postgres (`pg`, CommonJS, no bundled types) the PostgreSQL adapter uses, declared
 * here rather than adding @types/pg: the adapter loads the driver at first use (pg-driver.ts).
 */
declare module 'pg' {
  export interface QueryResult<R = Record<string, unknown>> {
    rows: R[]
    rowCount: number | null
  }
  export interface ConnectionOptions {
    connectionString?: string
    password?: string
    /** Milliseconds to wait for a connection. */
    connectionTimeoutMillis?: number
    application_name?: string
  }
  export interface PoolOptions extends ConnectionOptions {
    max?: number
    idleTimeoutMillis?: number
    /** Awaited on each new connection before its first use; a rejection fails the connection. */
    onConnect?: (client: Client) => Promise<unknown>
  }
  export interface Notification {
    channel: string
    payload?: string
  }
  /** A statement with a `name` is prepared once per connection and then only bound and executed. */
  export interface QueryConfig {
    name?: string
    text: string
    values?: unknown[]
  }
  /**
   * One query, submitted as it is (a config object is copied, property by property, into a new one); `name`
   * set after construction prepares it.
   */
  export class Query {
    constructor(text: string, values?: unknown[])
    name?: string
  }
  interface Queryable {
    query<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<QueryResult<R>>
    query<R = Record<string, unknown>>(config: QueryConfig): Promise<QueryResult<R>>
    /** A Query instance runs on a client with a callback (without one, the client answers the Query itself). */
    query<R = Record<string, unknown>>(
      query: Query,
      callback: (error: Error | null, result: QueryResult<R>) => void
    ): Query
  }
  export class Client implements Queryable {
    constructor(options?: ConnectionOptions)
    connect(): Promise<void>
    query<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<QueryResult<R>>
    query<R = Record<string, unknown>>(config: QueryConfig): Promise<QueryResult<R>>
    end(): Promise<void>
    on(event: 'notification', listener: (message: Notification) => void): this
    on(event: 'error', listener: (error: Error) => void): this
    on(event: 'end', listener: () => void): this
    removeAllListeners(): this
  }
  export interface PoolClient extends Queryable {
    release(error?: Error | boolean): void
  }
  export class Pool implements Queryable {
    constructor(options?: PoolOptions)
    query<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<QueryResult<R>>
    query<R = Record<string, unknown>>(config: QueryConfig): Promise<QueryResult<R>>
    query<R = Record<string, unknown>>(query: Query): Promise<QueryResult<R>>
    connect(): Promise<PoolClient>
    end(): Promise<void>
    on(event: 'error', listener: (error: Error) => void): this
    /** A new connection of the pool (a Client; checked out, it is a PoolClient). */
    on(event: 'connect', listener: (client: Client) => void): this
    readonly totalCount: number
    readonly idleCount: number
  }
  export class DatabaseError extends Error {
    code?: string
    detail?: string
  }
  export function escapeIdentifier(name: string): string
  export function escapeLiteral(text: string): string
  const pg: {
    Pool: typeof Pool
    Client: typeof Client
    DatabaseError: typeof DatabaseError
    Query: typeof Query
    escapeIdentifier: typeof escapeIdentifier
    escapeLiteral: typeof escapeLiteral
  }
  export default pg
}
