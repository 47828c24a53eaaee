import type { Socket } from 'socket.io-client'
import type { LiveWatch } from '../../../src/library/client.js'
import { call, findRecords } from './live-client.js'

/*
 * The differential oracle's parts (issue 39), shared by its runs on memory and on two PostgreSQL instances: a
 * seeded generator, random query shapes, random writes by the chat's users, and the check of every live list
 * against a fresh `find` by its user.
 */
export const TAGS = ['a', 'b', 'c', 'd', 'e']

/** A seeded generator (mulberry32): a failing run can be repeated with LIVE_ORACLE_SEED. */
export function random(seed: number) {
  const rand = () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!
  const int = (below: number) => Math.floor(rand() * below)
  return { rand, pick, int }
}
export type Random = ReturnType<typeof random>

/** A query of a random shape. */
export function randomQuery({ rand, pick, int }: Random): Record<string, unknown> {
  const filters: Record<string, unknown>[] = [
    {},
    { tag: pick(TAGS) },
    { tag: { $in: [pick(TAGS), pick(TAGS)] } },
    { n: { $gt: int(20) } },
    { tag: pick(TAGS), n: { $lte: int(20) } },
    { $or: [{ tag: pick(TAGS) }, { n: { $lt: int(10) } }] },
    { tag: { $ne: pick(TAGS) } }
  ]
  const query: Record<string, unknown> = { ...pick(filters) }
  query.$sort = pick([{ n: 1 }, { n: -1 }, { id: -1 }, { id: 1 }, { tag: 1, n: -1 }, { text: 1 }])
  if (rand() < 0.8) query.$limit = 1 + int(12)
  if (rand() < 0.3) query.$skip = int(4)
  if (rand() < 0.3) query.$select = pick([['n'], ['tag', 'n'], ['text']])
  return query
}

export interface Live {
  user: number
  query: Record<string, unknown>
  watch: LiveWatch<Record<string, unknown>>
}

/** A run's live queries: each watched by a random user with a random query; resets counted. */
export class Watches {
  readonly lives: Live[] = []
  resets = 0

  constructor(
    private readonly random$: Random,
    private readonly clients: readonly { service(path: string): { watch(options: object): unknown } }[]
  ) {}

  /** One more live query of a random user; `ready` of all of them says every first result arrived. */
  watchOne(): void {
    const user = this.random$.int(this.clients.length)
    const query = randomQuery(this.random$)
    const watch = this.clients[user]!.service('messages').watch({ query }) as LiveWatch<Record<string, unknown>>
    watch.on('reset', () => this.resets++)
    this.lives.push({ user, query, watch })
  }

  ready(): Promise<unknown> {
    return Promise.all(this.lives.map((live) => live.watch.ready))
  }
}

/** The users of a run: who they are, and the ids of their messages (rules: only the author patches or removes). */
export interface Writers {
  ids: unknown[]
  owned: number[][]
  /** The socket a user writes through (a random instance's, when there are several). */
  socket(user: number): Socket
}

/** One random write by a random user: creates (some direct messages), patches that move records, removes. */
export async function randomWrite({ rand, pick, int }: Random, writers: Writers): Promise<void> {
  const user = int(writers.ids.length)
  const mine = writers.owned[user]!
  const socket = writers.socket(user)
  const roll = rand()
  if (mine.length === 0 || roll < 0.4 || (mine.length < 30 && roll < 0.55)) {
    const data: Record<string, unknown> = { text: `t${int(1000)}`, tag: pick(TAGS), n: int(20) }
    if (rand() < 0.25) data.to = pick(writers.ids)
    const created = await call<{ id: number }>(socket, 'create', 'messages', data)
    mine.push(created.id)
  } else if (roll < 0.85) {
    const id = pick(mine)
    const patch = pick([
      { n: int(20) },
      { tag: pick(TAGS) },
      { text: `t${int(1000)}` },
      { n: int(20), tag: pick(TAGS) }
    ])
    // A remove of the same burst may land first: its 404 is the store's answer, not a divergence.
    await call(socket, 'patch', 'messages', id, patch).catch((error: { code?: number }) => {
      if (error.code !== 404) throw error
    })
  } else {
    const id = mine.splice(int(mine.length), 1)[0]!
    await call(socket, 'remove', 'messages', id)
  }
}

/** Each live list against a fresh find by its user, polled until equal or 5 s: the lists that never matched. */
export async function divergences(lives: Live[], finder: (user: number) => Socket): Promise<string[]> {
  const failed: string[] = []
  await Promise.all(
    lives.map(async (live) => {
      await live.watch.ready
      const deadline = Date.now() + 5000
      let expected: string
      for (;;) {
        expected = JSON.stringify(await findRecords(finder(live.user), 'messages', live.query))
        if (JSON.stringify(live.watch.list) === expected) return
        if (Date.now() > deadline) break
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      failed.push(
        `user ${live.user} ${JSON.stringify(live.query)}\n  live: ${JSON.stringify(live.watch.list)}\n  find: ${expected}`
      )
    })
  )
  return failed
}
