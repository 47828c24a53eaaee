import type { RuleBuilder, RulesDefinition, RulesUser } from '../../../src/application/rules/index.js'
import type { Connection } from '../../../src/domain/service/service.js'
import type { Store } from '../../../src/domain/store/store.js'
import { as, NOTE_FIELDS, rulesApp, type Note } from './rules-harness.js'

/*
 * The no-leak property, on any store: for random (rules, write, user) triples, every record, field and event a
 * user receives is one the same user could `get`, with the same fields. Rules are random CASL rule sets over the
 * notes' fields (conditions with every operator rules support, field lists, cannot rules, a role); writes are
 * creates, patches and removes, by id and multi-record, internal and by a user. Seeded: the seed is in every failure.
 */

/** mulberry32: a small seeded generator. */
export function random(seed: number) {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!
  const some = <T>(items: readonly T[]): T[] => items.filter(() => next() < 0.5)
  return { next, int, pick, some }
}
type Random = ReturnType<typeof random>

const USER_IDS = [1, 2, 3]
const FIELDS = ['ownerId', 'to', 'level', 'text'] as const

function value(r: Random, field: string, user: RulesUser): unknown {
  if (field === 'text') return r.pick(['a', 'b', 'c'])
  if (field === 'level') return r.int(4)
  return r.next() < 0.4 ? user!.id : r.pick([...USER_IDS, null])
}

/** A random condition; `exact`: only operators with an exact negation (for cannot rules). */
function condition(r: Random, user: RulesUser, exact: boolean): Record<string, unknown> {
  const field = r.pick(FIELDS)
  const ops = exact || field !== 'level' ? ['eq', '$ne', '$in', '$nin'] : ['eq', '$lt', '$gte', '$in']
  const op = r.pick(ops)
  const one = value(r, field, user)
  if (op === 'eq') return { [field]: one }
  if (op === '$in' || op === '$nin') return { [field]: { [op]: [one, value(r, field, user)] } }
  return { [field]: { [op]: field === 'level' ? r.int(4) : one } }
}

/** A random rule set, as a definition of the user (the same shape for everyone, values filled in per user). */
export function randomRules(seed: number): RulesDefinition {
  return (user, builder: RuleBuilder) => {
    if (!user) return
    const r = random(seed)
    for (let count = 1 + r.int(4); count > 0; count--) {
      const inverted = r.next() < 0.3
      const action = r.pick(['read', 'read', 'manage', 'patch'])
      const fields = r.next() < 0.35 ? r.some(NOTE_FIELDS) : undefined
      const conditions =
        r.next() < 0.7
          ? r.next() < 0.2
            ? { $or: [condition(r, user, inverted), condition(r, user, inverted)] }
            : condition(r, user, inverted)
          : undefined
      if (r.next() < 0.3 && user.role !== 'admin') continue
      const rule = inverted ? builder.cannot : builder.can
      if (fields && fields.length > 0) rule('' + action, 'notes', fields, conditions as never)
      else rule('' + action, 'notes', conditions as never)
    }
  }
}

function randomNote(r: Random): Note {
  const note: Note = { text: r.pick(['a', 'b', 'c']), ownerId: r.pick(USER_IDS), level: r.int(4), secret: 's' }
  if (r.next() < 0.5) note.to = r.pick(USER_IDS)
  return note
}

/** Runs `trials` rule sets with `writes` writes each, 3 users watching; answers the number of triples checked. */
export async function checkNoLeaks(options: {
  seed: number
  trials: number
  writes: number
  store?: () => Store<Note>
  /** Waits until the events of the last write were delivered (live stores publish asynchronously). */
  drained?: (published: () => number, expected: number) => Promise<void>
}): Promise<number> {
  let triples = 0
  let definition: RulesDefinition = () => undefined
  const setup = await rulesApp({ notes: (user, builder) => definition(user, builder) }, options.store?.())
  const { app, notes, deliveries, connect, settled } = setup
  let published = 0
  for (const event of ['created', 'patched', 'updated', 'removed']) app.service('notes').on(event, () => published++)
  const drain = async (expected: number) => {
    await options.drained?.(() => published, expected)
    await settled()
  }
  for (let trial = 0; trial < options.trials; trial++) {
    const seed = options.seed + trial
    const r = random(seed * 7919)
    definition = randomRules(seed)
    const before = published
    const cleared = (await notes.remove(null, {})) as Note[]
    for (let i = 0; i < 4; i++) await notes.create(randomNote(r))
    await drain(before + cleared.length + 4)
    const users = USER_IDS.map((id) => ({ id, role: r.next() < 0.2 ? 'admin' : 'user' }))
    const connections = users.map((user) => connect(user))
    for (let write = 0; write < options.writes; write++) {
      deliveries.length = 0
      // find against get every fourth write: the property is about what each user receives; find is how it is read.
      const readable = await Promise.all(users.map((user) => visible(notes, user, write % 4 === 0)))
      const start = published
      const changed = await randomWrite(r, notes, users)
      await drain(start + changed)
      const after = await Promise.all(users.map((user) => visible(notes, user, write % 4 === 1)))
      users.forEach((user, index) => {
        const connection = connections[index]!
        for (const delivery of deliveries) {
          if (!delivery.connections.includes(connection)) continue
          const data = delivery.data as Note
          const expected = (delivery.event === 'removed' ? readable : after)[index]!.get(data.id as number)
          if (!sameRecord(data, expected))
            throw new Error(
              `seed ${seed}: user ${JSON.stringify(user)} received ${delivery.event} ${JSON.stringify(data)}; ` +
                `get gives ${JSON.stringify(expected)}`
            )
        }
        triples++
      })
    }
    for (const connection of connections) app.emit('disconnect', connection as Connection)
  }
  return triples
}

/** What `user` can see: every record of find, each checked against get (same fields, same values). */
async function visible(notes: unknown, user: RulesUser, checkGet: boolean): Promise<Map<number, Note>> {
  const service = notes as {
    find(params: object): Promise<{ data: Note[] }>
    get(id: unknown, p: object): Promise<Note>
  }
  const page = await service.find(as(user))
  const byId = new Map<number, Note>()
  for (const record of page.data) {
    byId.set(record.id as number, record)
    if (!checkGet) continue
    const got = await service.get(record.id, as(user))
    if (!sameRecord(record, got)) throw new Error(`find and get disagree: ${JSON.stringify([record, got])}`)
  }
  return byId
}

function sameRecord(a: Note | undefined, b: Note | undefined): boolean {
  if (!a || !b) return false
  const keys = Object.keys(a).sort()
  return JSON.stringify(keys) === JSON.stringify(Object.keys(b).sort()) && keys.every((key) => a[key] === b[key])
}

/** One random write, internal or by one of the users (refusals are fine); answers how many events it makes. */
async function randomWrite(r: Random, notes: unknown, users: RulesUser[]): Promise<number> {
  const service = notes as {
    create(data: Note, params?: object): Promise<Note>
    patch(id: unknown, data: Note, params?: object): Promise<Note | Note[]>
    remove(id: unknown, params?: object): Promise<Note | Note[]>
  }
  const params = r.next() < 0.5 ? {} : as(r.pick(users), r.next() < 0.3 ? { level: { $lt: 2 } } : undefined)
  const id = r.pick([1, 2, 3, 4, 5, 6, 7, 8]) + 0
  const data: Note =
    r.next() < 0.5 ? { to: r.pick([...USER_IDS, null]) } : { ownerId: r.pick(USER_IDS), level: r.int(4) }
  const count = (result: Note | Note[]) => (Array.isArray(result) ? result.length : 1)
  try {
    switch (r.int(5)) {
      case 0:
        return count(await service.create({ ...randomNote(r) }, params))
      case 1:
        return count(await service.patch(await anyId(service, id), data, params))
      case 2:
        return count(await service.patch(null, data, params))
      case 3:
        return count(await service.remove(await anyId(service, id), params))
      default:
        return count(await service.remove(null, { ...params, query: { level: r.int(4) } }))
    }
  } catch (error) {
    const code = (error as { code?: number }).code
    if (code === 403 || code === 404 || code === 400) return 0
    throw error
  }
}

/** Ids grow across trials: the n-th record of the store now (internally), or a missing id. */
async function anyId(service: unknown, n: number): Promise<unknown> {
  const all = (await (service as { find(p: object): Promise<{ data: Note[] }> }).find({})).data
  return all[n % (all.length + 1)]?.id ?? 999_999
}
