import { signUp } from '../../src/testing/instances/instance-calls.js'
import { openClient, type ChaosClient, type ChaosClientKind } from './chaos-clients.js'
import type { ChaosStore } from './chaos-stores.js'
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js'

/*
 * Chaos for exactly-once writes (issue 40), shared by test/e2e/idempotency-chaos*.test.ts and `npm run bench:chaos`:
 * two instances of the built server, each a real process, on one database; `clients` clients, each on its own
 * socket.io connection through its own TCP proxy (a load balancer), writing `writes` creates in all, each with a
 * text of its own. While they write:
 *
 * - drops: a random client's proxy is cut (every connection dropped) and listens again a moment later;
 * - duplicate sends (plumage's client): every `duplicateEvery`-th write goes out twice at once with one key;
 * - kills between commit and reply: the proxies of the clients on one instance hold back every byte the instance
 *   sends them; the harness polls the database until a write still unanswered is committed *after* the hold began
 *   (so its reply cannot have arrived), then SIGKILLs the instance and moves those clients to the other one; the
 *   killed instance is started again and its clients go back to it (another drop), so both keep serving.
 *
 * Afterwards it counts every text in the database: lost (never written), doubled (written more than once), and for
 * plumage's clients whether each one's live query converged to a fresh `find`.
 */

export interface ChaosInstance {
  url: string
  kill(): void
  stop(): Promise<unknown>
}

export interface ChaosOptions {
  store: ChaosStore
  /** Starts an instance of the built server with these variables on top of the harness's own. */
  start(env: Record<string, string>): Promise<ChaosInstance>
  client: ChaosClientKind
  clients: number
  /** Writes in all, shared evenly by the clients. */
  writes: number
  /** Writes in flight per client (default 1). */
  concurrency?: number
  /** Every n-th write of a client is a duplicate send (plumage's client only; default 10). */
  duplicateEvery?: number
  /** Instances SIGKILLed between commit and reply, spread evenly over the run. */
  kills: number
  /** Milliseconds between random drops: [least, most]. */
  dropEvery?: [number, number]
  /** Prefix of the run's texts and accounts (letters and digits). */
  run: string
  /**
   * The access tokens' lifetime (JWT_EXPIRES_IN; default 24h). plumage's client renews its token a minute before it
   * expires, so a lifetime just over a minute renews every client's token every few seconds through the chaos.
   */
  tokenLifetime?: string
  log?: (line: string) => void
}

export interface ChaosReport {
  store: string
  client: ChaosClientKind
  writes: number
  /** Rows with the run's texts. */
  rows: number
  lost: number
  /** Writes stored more than once. */
  doubled: number
  /** Rows beyond one per write. */
  extraRows: number
  /** Calls that rejected (the caller was told it failed), and how many of them were written nonetheless. */
  failed: number
  failedButWritten: number
  duplicateSends: number
  drops: number
  kills: number
  /** Writes committed while their instance's reply was held back, at the moment it was killed. */
  committedUnanswered: number
  /** Writes that succeeded but rejected with FenceTimeout: their views did not show them within the fence's wait. */
  fenceTimeouts: number
  /** Writes whose call never settled (the run gave up on them after a minute without progress). */
  hung: number
  /** Instance starts that failed and were tried again. */
  failedStarts: number
  /** Clients whose live view equals a fresh find at the end (plumage), of `clients`. */
  converged: number | undefined
  resets: number
  /** Access tokens renewed (plumage), and sessions that could not be renewed. */
  refreshes: number
  expiredSessions: number
  seconds: number
  examples: { lost: string[]; doubled: string[]; failed: string[] }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const between = ([least, most]: [number, number]) => least + Math.random() * (most - least)
const portOf = (instance: ChaosInstance) => Number(new URL(instance.url).port)

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  if (options.writes % options.clients !== 0) throw new Error('writes must be a multiple of clients')
  const run = new ChaosRun(options)
  try {
    return await run.execute()
  } finally {
    await run.close()
  }
}

class ChaosRun {
  private readonly slots: ChaosInstance[] = []
  private readonly proxies: TcpProxy[] = []
  private readonly clients: ChaosClient[] = []
  /** The slot each client's proxy points at. */
  private readonly home: number[] = []
  /** Texts of calls not settled yet → their client. */
  private readonly pending = new Map<string, number>()
  private readonly failures = new Map<string, string>()
  /** The next write of each client's share. */
  private readonly next: number[] = []
  private readonly extraLoops: Promise<void>[] = []
  private writing = true
  private killing = false
  private done = 0
  private drops = 0
  private kills = 0
  private duplicateSends = 0
  private committedUnanswered = 0
  private fenceTimeouts = 0
  private failedStarts = 0
  private hung = 0

  constructor(private readonly options: ChaosOptions) {}

  private log(line: string): void {
    this.options.log?.(line)
  }

  /** Starts an instance; a start that fails (as a crashed pod's restart may) is tried again, and counted. */
  private async start(): Promise<ChaosInstance> {
    for (let attempt = 1; ; attempt++) {
      try {
        const env = { JWT_EXPIRES_IN: this.options.tokenLifetime ?? '24h', ...this.options.store.env }
        return await this.options.start(env)
      } catch (error) {
        this.failedStarts++
        this.log(`an instance failed to start (attempt ${attempt}): ${(error as Error).message}`)
        if (attempt === 3) throw error
        await sleep(500)
      }
    }
  }

  async execute(): Promise<ChaosReport> {
    const { clients, writes, client: kind, run } = this.options
    const began = performance.now()
    this.slots.push(await this.start(), await this.start())
    for (let n = 0; n < clients; n++) {
      const email = `c${n}.${run}@chaos.io`
      await signUp(this.slots[0]!.url, email)
      const proxy = await startTcpProxy('127.0.0.1', portOf(this.slots[n % 2]!))
      this.proxies.push(proxy)
      this.home.push(n % 2)
      this.next.push(0)
      this.clients.push(await openClient(kind, `http://127.0.0.1:${proxy.port}`, email, n))
    }
    this.log(`${clients} ${kind} clients connected; writing ${writes.toLocaleString()} on ${this.options.store.name}`)
    const progress = setInterval(() => this.log(`${this.done.toLocaleString()} of ${writes.toLocaleString()}`), 10_000)
    const dropping = this.dropLoop()
    const killing = this.killLoop()
    try {
      const loops = this.clients.flatMap((_, n) =>
        Array.from({ length: this.options.concurrency ?? 1 }, () => this.writeLoop(n))
      )
      const all = (async () => {
        await Promise.all(loops)
        // Loops the kills added (writes sent while replies were held back).
        while (this.extraLoops.length > 0) await Promise.all(this.extraLoops.splice(0))
      })()
      await Promise.race([all, this.stalled()])
    } finally {
      this.writing = false
      clearInterval(progress)
      await dropping
      await killing
    }
    this.log(`every write settled (${this.failures.size} failed); ${this.drops} drops, ${this.kills} kills`)
    const converged = kind === 'plumage' ? await this.converge() : undefined
    return { ...(await this.count()), converged, seconds: (performance.now() - began) / 1000 }
  }

  /** Resolves when no write settled for a minute: the writes still pending then are reported as hung. */
  private async stalled(): Promise<void> {
    for (let seen = -1; this.writing && this.done !== seen;) {
      seen = this.done
      await sleep(60_000)
    }
    if (!this.writing) return
    const hung = [...new Set(this.pending.values())].map(
      (n) =>
        `client ${n} (connected: ${this.clients[n]!.socket.connected}, last disconnect: ${this.clients[n]!.lastDisconnect}, instance ${this.home[n]})`
    )
    this.log(`STALLED: ${this.pending.size} writes unsettled for a minute, of ${hung.join(', ')}`)
    const committed = await this.options.store.present([...this.pending.keys()]).catch(String)
    this.log(`STALLED writes: ${[...this.pending.keys()].join(', ')}; in the database: ${String(committed)}`)
    for (const n of new Set(this.pending.values()))
      this.log(`STALLED client ${n}: ${await this.clients[n]!.diagnose?.().catch(String)}`)
    this.hung = this.pending.size
  }

  /** One write after another for client `n`, taking the next of its share, until the share is written. */
  private async writeLoop(n: number): Promise<void> {
    const client = this.clients[n]!
    const share = this.options.writes / this.options.clients
    const every = this.options.client === 'plumage' ? (this.options.duplicateEvery ?? 10) : 0
    while (this.next[n]! < share) {
      const w = this.next[n]!++
      const text = this.textOf(n, w)
      this.pending.set(text, n)
      try {
        if (every > 0 && w % every === every - 1) {
          this.duplicateSends++
          const key = `dup.${this.options.run}.${n}.${w}`
          await Promise.all([client.write(text, key), client.write(text, key)])
        } else await client.write(text)
      } catch (error) {
        // The write succeeded (its result is error.result); only its views were late: counted, not a failure.
        if ((error as { name?: unknown }).name === 'FenceTimeout') this.fenceTimeouts++
        else this.failures.set(text, error instanceof Error ? `${error.name}: ${error.message}` : String(error))
      } finally {
        this.pending.delete(text)
        this.done++
      }
    }
  }

  private textOf(n: number, w: number): string {
    return `${this.options.run} ${n}-${w}`
  }

  private async dropLoop(): Promise<void> {
    while (this.writing) {
      await sleep(between(this.options.dropEvery ?? [100, 300]))
      if (this.killing || !this.writing) continue
      const proxy = this.proxies[Math.floor(Math.random() * this.proxies.length)]!
      await proxy.cut()
      this.drops++
      await sleep(between([30, 120]))
      await proxy.restore()
    }
  }

  private async killLoop(): Promise<void> {
    const { kills, writes } = this.options
    for (let k = 0; k < kills; k++) {
      const at = (writes * (k + 1)) / (kills + 1)
      while (this.writing && this.done < at) await sleep(20)
      if (!this.writing) return
      await this.killBetweenCommitAndReply(k % 2)
    }
  }

  /** Holds back the victim's replies, waits for a commit made since, SIGKILLs it, moves its clients, restarts it. */
  private async killBetweenCommitAndReply(victim: number): Promise<void> {
    const survivor = 1 - victim
    this.killing = true
    const moved = this.home.flatMap((slot, n) => (slot === victim ? [n] : []))
    for (const n of moved) this.proxies[n]!.hold()
    const unanswered = () => [...this.pending].filter(([, n]) => moved.includes(n)).map(([text]) => text)
    const before = new Set(await this.options.store.present(unanswered()))
    // One more write from each of them, sent after the hold began: once committed, its reply cannot have arrived.
    for (const n of moved) this.extraLoops.push(this.writeLoop(n))
    let committed: string[] = []
    for (const deadline = Date.now() + 3000; Date.now() < deadline && committed.length === 0;) {
      await sleep(10)
      const waiting = unanswered()
      committed = waiting.length ? (await this.options.store.present(waiting)).filter((text) => !before.has(text)) : []
    }
    this.slots[victim]!.kill()
    this.kills++
    this.committedUnanswered += committed.length
    this.log(`SIGKILL of instance ${victim}: ${committed.length} writes committed, their replies never sent on`)
    await this.move(moved, survivor)
    this.killing = false
    this.slots[victim] = await this.start()
    await this.move(moved, victim)
  }

  /** Points these clients' proxies at a slot and drops their connections: they reconnect there. */
  private async move(clients: number[], slot: number): Promise<void> {
    for (const n of clients) {
      const proxy = this.proxies[n]!
      proxy.retarget(portOf(this.slots[slot]!))
      await proxy.cut()
      await proxy.restore()
      this.home[n] = slot
    }
  }

  /**
   * Waits (up to 60 s) until every client's live view equals a fresh find; answers how many do. The writes have all
   * settled, so a view that equals its find once stays so. One find at a time: each is a paginated `find`, whose
   * count reads every matching row of a table of 100,000 without an index on the field, and twenty at once timed
   * out (4 s) on RethinkDB.
   */
  private async converge(): Promise<number> {
    const pending = new Set(this.clients.keys())
    for (const deadline = Date.now() + 60_000; pending.size > 0 && Date.now() < deadline; await sleep(200))
      for (const n of [...pending]) if (await this.clients[n]!.converged().catch(() => false)) pending.delete(n)
    for (const n of pending)
      this.log(`DIVERGED client ${n} (instance ${this.home[n]}): ${await this.clients[n]!.diagnose?.().catch(String)}`)
    const converged = this.clients.length - pending.size
    return converged
  }

  private async count(): Promise<Omit<ChaosReport, 'converged' | 'seconds'>> {
    const { clients, writes, run, store, client } = this.options
    const counts = new Map<string, number>()
    for (const text of await store.texts())
      if (text.startsWith(`${run} `)) counts.set(text, (counts.get(text) ?? 0) + 1)
    const expected = Array.from({ length: writes }, (_, i) => this.textOf(i % clients, Math.floor(i / clients)))
    const lost = expected.filter((text) => !counts.has(text))
    const doubled = [...counts].filter(([, count]) => count > 1)
    const failed = [...this.failures.keys()]
    return {
      store: store.name,
      client,
      writes,
      rows: [...counts.values()].reduce((sum, count) => sum + count, 0),
      lost: lost.length,
      doubled: doubled.length,
      extraRows: doubled.reduce((sum, [, count]) => sum + count - 1, 0),
      failed: failed.length,
      failedButWritten: failed.filter((text) => counts.has(text)).length,
      duplicateSends: this.duplicateSends,
      drops: this.drops,
      kills: this.kills,
      committedUnanswered: this.committedUnanswered,
      fenceTimeouts: this.fenceTimeouts,
      failedStarts: this.failedStarts,
      hung: this.hung,
      resets: this.clients.reduce((sum, chaos) => sum + chaos.resets, 0),
      refreshes: this.clients.reduce((sum, chaos) => sum + chaos.refreshes, 0),
      expiredSessions: this.clients.reduce((sum, chaos) => sum + chaos.expired, 0),
      examples: {
        lost: lost.slice(0, 5),
        doubled: doubled.slice(0, 5).map(([text, count]) => `${text} ×${count}`),
        failed: failed.slice(0, 5).map((text) => `${text}: ${this.failures.get(text)}`)
      }
    }
  }

  async close(): Promise<void> {
    this.writing = false
    for (const client of this.clients) client.close()
    for (const proxy of this.proxies) await proxy.close()
    await Promise.all(this.slots.map((slot) => slot.stop()))
  }
}
