import type { NullableId } from './service.js'

export const STANDARD_METHODS = ['find', 'get', 'create', 'update', 'patch', 'remove'] as const
export type StandardMethod = (typeof STANDARD_METHODS)[number]

export function isStandardMethod(method: string): method is StandardMethod {
  return (STANDARD_METHODS as readonly string[]).includes(method)
}

/** Names that can never be service methods (docs/wire-protocol.md, Service calls). */
export const RESERVED_METHODS: ReadonlySet<string> = new Set([
  'setup',
  'teardown',
  'hooks',
  'on',
  'once',
  'off',
  'emit',
  'publish',
  'removeListener',
  'addListener',
  'removeAllListeners',
  'listeners',
  'constructor',
  'mixin'
])

/**
 * Where a method's id and data sit among its arguments — the one table every layer shares: the app
 * calls services with it, transports read wire calls with it, clients send calls with it.
 *
 * | method | arguments            | wire (socket) after the path |
 * |--------|----------------------|------------------------------|
 * | find   | (params)             | (query)                      |
 * | get    | (id, params)         | (id, query)                  |
 * | create | (data, params)       | (data, query)                |
 * | update | (id, data, params)   | (id, data, query)            |
 * | patch  | (id, data, params)   | (id, data, query)            |
 * | remove | (id, params)         | (id, query)                  |
 * | custom | (data, params)       | (data, query)                |
 */
export interface MethodLayout {
  /** The first argument is an id. */
  readonly id: boolean
  /** An argument (after the id, if any) is the data. */
  readonly data: boolean
  /** The service event a successful call emits; absent for find, get and custom methods. */
  readonly event?: string
}

const LAYOUTS: Readonly<Record<string, MethodLayout>> = {
  find: { id: false, data: false },
  get: { id: true, data: false },
  create: { id: false, data: true, event: 'created' },
  update: { id: true, data: true, event: 'updated' },
  patch: { id: true, data: true, event: 'patched' },
  remove: { id: true, data: false, event: 'removed' }
}

/** Custom methods take `(data, params)`, as `create` does. */
const CUSTOM: MethodLayout = { id: false, data: true }

/** The events of the standard mutating methods: created, updated, patched, removed. */
export const STANDARD_EVENTS: readonly string[] = Object.values(LAYOUTS).flatMap((layout) => layout.event ?? [])

export function layoutOf(method: string): MethodLayout {
  // A switch, not a keyed lookup in LAYOUTS: every call reads its layout several times, with varying names.
  switch (method) {
    case 'find':
      return LAYOUTS.find!
    case 'get':
      return LAYOUTS.get!
    case 'create':
      return LAYOUTS.create!
    case 'update':
      return LAYOUTS.update!
    case 'patch':
      return LAYOUTS.patch!
    case 'remove':
      return LAYOUTS.remove!
    default:
      return CUSTOM
  }
}

/** The parts of one call, by meaning. `last` is params for a method call, the query on the socket wire. */
export interface CallParts<Last> {
  id?: NullableId
  data?: unknown
  last?: Last
}

/** The positional arguments of `method` for these parts: `(id?, data?, last)`. */
export function toArguments<Last>(method: string, parts: CallParts<Last>): unknown[] {
  const layout = layoutOf(method)
  const args: unknown[] = []
  if (layout.id) args.push(parts.id)
  if (layout.data) args.push(parts.data)
  args.push(parts.last)
  return args
}

/** The parts of `method` read from positional arguments; `extra` counts arguments beyond the last one. */
export function fromArguments<Last>(method: string, args: readonly unknown[]): CallParts<Last> & { extra: number } {
  const layout = layoutOf(method)
  let index = 0
  const id = layout.id ? (args[index++] as NullableId | undefined) : undefined
  const data = layout.data ? args[index++] : undefined
  const last = args[index] as Last | undefined
  return { id, data, last, extra: Math.max(0, args.length - index - 1) }
}
