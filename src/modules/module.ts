import type { Container } from 'inversify'
import type { App } from '../application/app.js'
import type { AuthenticationStrategy } from '../application/authentication/authentication-strategy.js'
import type { AuthenticationSessions, LoginLimits } from '../application/authentication/session-ports.js'
import type { StoreFactory } from '../domain/store/store-factory.js'
import type { Config } from '../infrastructure/config/config.js'
import type { Env } from '../infrastructure/config/environment.js'
import type { HttpAppOptions, HttpEngine } from '../interfaces/http/http-engine.js'
import type { HttpExtension } from '../interfaces/http/http-extension.js'
import type { RealtimeExtension, RealtimeTransportFactory } from '../interfaces/realtime/realtime-transport.js'

/** What a module reads when the composition root loads it. */
export interface ModuleContext {
  readonly config: Config
  /** Where the module reads its own settings (RETHINKDB_*, POSTGRES_*, OTEL_*…). */
  readonly env: Env
}

/**
 * An optional capability as the composition root plugs it in (README "Modules", ADR 0017). A module is its
 * folder(s) in the layers it touches, each with an `index.ts` face, and one wiring file here in src/modules that
 * exports `module: PlumageModule`; src/modules/index.ts registers it with one line, and it is loaded with
 * `import()` only when that line's setting selects it. Every member is optional: a module uses the hooks it needs.
 */
export interface PlumageModule {
  /** Binds (or rebinds) its adapters before the app is built: a store's StoreFactory, Prometheus' Metrics. */
  bind?(container: Container, context: ModuleContext): void | Promise<void>
  /** Decorates the store factory the app's services use (metrics time their queries, tracing makes them spans). */
  stores?(stores: StoreFactory, container: Container): StoreFactory
  /** What it adds to the authentication service (sessions: refresh tokens, revocation, login limits). */
  authentication?(container: Container): AuthenticationAddOns
  /** Plugs into the built app: its extensions around calls and publications, its connection extension. */
  extend?(app: App, container: Container): void
  /** Its part in the HTTP engines: routes, a wrapper of the request listener, a look at the server. */
  http?(app: App, container: Container): HttpExtension
  /** Its part in the real-time transport. */
  realtime?(container: Container): RealtimeExtension
  /** HTTP engines it provides, by the name HTTP selects them with. */
  httpEngines?: Readonly<Record<string, (app: App, options: HttpAppOptions) => HttpEngine>>
  /** Real-time transports it provides, by the name REALTIME selects them with. */
  realtimeTransports?: Readonly<Record<string, RealtimeTransportFactory>>
  /** Stops what it started, after the app's teardown (tracing exports its last spans). */
  stop?(container: Container): Promise<void>
}

/** The authentication service's optional parts, by the module that provides them. */
export interface AuthenticationAddOns {
  sessions?: AuthenticationSessions
  throttle?: LoginLimits
  strategies?: AuthenticationStrategy[]
}

/** One line of the registry: when the module is on, and how it is loaded. */
export interface RegisteredModule {
  on(config: Config): boolean
  load(): Promise<{ module: PlumageModule }>
  /** The STORE value that selects it, for a store module: STORE is checked against these (and `memory`). */
  store?: string
  /** The HTTP value that selects it, for an HTTP engine's module. */
  http?: string
  /** The REALTIME value that selects it, for a real-time transport's module. */
  realtime?: string
}
