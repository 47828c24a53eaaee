import { EventEmitter } from 'node:events'
import { RESERVED_METHODS, STANDARD_EVENTS, STANDARD_METHODS } from '../domain/service/method-layout.js'
import type { ServiceHandle } from './hook-context.js'
import { HookRegistry } from './hook-registry.js'
import type { CompiledSchemas } from './schema/compile-schemas.js'
import type { LiveService, Resolved, ServiceEntry, ServiceOptions } from './service-entry.js'

/** The registered services by path, and how request paths resolve to them. */
export class ServiceRegistry {
  private readonly entries = new Map<string, ServiceEntry>()
  /** Services whose path has `:placeholders`, tried in registration order. */
  private readonly routed: ServiceEntry[] = []

  get paths(): string[] {
    return [...this.entries.keys()]
  }

  values(): IterableIterator<ServiceEntry> {
    return this.entries.values()
  }

  get(path: string): ServiceEntry | undefined {
    // Registered names are normalised: a name as registered (the usual `app.service('users')`) needs no work.
    return this.entries.get(path) ?? this.entries.get(normalisePath(path))
  }

  /**
   * Checks the service and options, then registers a new entry. Its handle is the service's prototype
   * child; the app gives it its members (service-handle.ts).
   */
  register(path: string, service: object, options: ServiceOptions, schemas?: CompiledSchemas): ServiceEntry {
    const name = normalisePath(path)
    if (this.entries.has(name)) throw new Error(`A service is already registered at '${name}'`)
    const has = (method: string) => typeof (service as Record<string, unknown>)[method] === 'function'
    const methods = options.methods ?? STANDARD_METHODS.filter(has)
    for (const method of methods) {
      if (RESERVED_METHODS.has(method)) throw new Error(`'${method}' is reserved and cannot be a service method`)
      if (!has(method))
        throw new Error(`Method '${method}' is listed for '${name}' but the service does not implement it`)
    }
    const segments = name.split('/')
    if (segments.some((segment) => segment === ':__id' || segment === ':__feathersId'))
      throw new Error('Reserved route placeholder')
    const declared = (service as { events?: unknown }).events
    const entry: ServiceEntry = {
      path: name,
      service,
      handle: Object.create(service) as ServiceHandle,
      methods,
      events: new Set([
        ...STANDARD_EVENTS,
        ...(options.events ?? []),
        ...(Array.isArray(declared) ? (declared as string[]) : [])
      ]),
      hooks: new HookRegistry(),
      chains: new Map(),
      emitter: new EventEmitter().setMaxListeners(0),
      publishers: new Map(),
      protectedFields: new Set(),
      setupSteps: new Set(),
      eventResolvers: { result: [], external: [] },
      route: segments.some((segment) => segment.startsWith(':')) ? segments : undefined,
      live: typeof (service as Partial<LiveService>).watch === 'function',
      schemas
    }
    this.entries.set(name, entry)
    if (entry.route) this.routed.push(entry)
    return entry
  }

  /**
   * Finds the service for a request path: an exact match, or (with `allowId`, as REST does) a
   * service path plus one trailing id segment; `:placeholder` paths fill `route`.
   */
  resolve(path: string, allowId: boolean): Resolved | undefined {
    // Every REST request comes here: a path without doubled or trailing slashes needs no splitting.
    const clean = path.startsWith('/') ? path.slice(1) : path
    if (clean.length > 0 && !clean.endsWith('/') && !clean.includes('//')) {
      const exact = this.entries.get(clean)
      if (exact && !exact.route) return { entry: exact, route: {} }
      const slash = allowId ? lastSlash(clean) : -1
      const parent = slash > 0 ? this.entries.get(clean.slice(0, slash)) : undefined
      if (parent && !parent.route) return { entry: parent, route: {}, id: clean.slice(slash + 1) }
      if (this.routed.length === 0) return undefined
    }
    const segments = path.split('/').filter((segment) => segment.length > 0)
    const exact = this.entries.get(segments.join('/'))
    if (exact && !exact.route) return { entry: exact, route: {} }
    if (allowId && segments.length > 1) {
      const parent = this.entries.get(segments.slice(0, -1).join('/'))
      if (parent && !parent.route) return { entry: parent, route: {}, id: segments[segments.length - 1] }
    }
    for (const entry of this.routed) {
      const matched = matchRoute(entry.route!, segments, allowId)
      if (matched) return { entry, ...matched }
    }
    return undefined
  }
}

function matchRoute(
  pattern: readonly string[],
  segments: string[],
  allowId: boolean
): Omit<Resolved, 'entry'> | undefined {
  const extra = segments.length - pattern.length
  if (extra < 0 || extra > (allowId ? 1 : 0)) return undefined
  const route: Record<string, string> = {}
  for (const [index, part] of pattern.entries()) {
    if (part.startsWith(':')) route[part.slice(1)] = segments[index]!
    else if (part !== segments[index]) return undefined
  }
  return { route, id: extra === 1 ? segments[segments.length - 1] : undefined }
}

/** `path.lastIndexOf('/')` as a loop: the builtin is a call into V8's runtime, on every REST request. */
function lastSlash(path: string): number {
  for (let index = path.length - 1; index >= 0; index--) if (path.charCodeAt(index) === 0x2f) return index
  return -1
}

function normalisePath(path: string): string {
  return path
    .split('/')
    .filter((segment) => segment.length > 0)
    .join('/')
}
