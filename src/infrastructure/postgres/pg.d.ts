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
  }
  export interface Notification {
    channel: string
    payload?: string
  }
  interface Queryable {
    query<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<QueryResult<R>>
  }
  export class Client implements Queryable {
    constructor(options?: ConnectionOptions)
    connect(): Promise<void>
    query<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<QueryResult<R>>
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
    connect(): Promise<PoolClient>
    end(): Promise<void>
    on(event: 'error', listener: (error: Error) => void): this
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
    escapeIdentifier: typeof escapeIdentifier
    escapeLiteral: typeof escapeLiteral
  }
  export default pg
}
