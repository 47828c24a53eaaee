import type { ContractTools } from '../contract.js'
import { call, PASSWORD, signUp, textsOf, until } from './instance-calls.js'
import type {
  InstanceClient,
  MultiInstanceContractOptions,
  RelayedClient,
  ServerInstance,
  SharedDatabase
} from './multi-instance.contract.js'

/** What the contract's cases use: its options' database and clients, with what they start closed after each case. */
export interface InstanceCaseContext {
  database(): Promise<SharedDatabase>
  listen(url: string, accessToken: string): Promise<InstanceClient>
  relayed: MultiInstanceContractOptions['clients']['relayed']
}

/**
 * The `resume` group of the multi-instance contract: socket.io connection state recovery across instances. A
 * client reaches one instance through a relay; the relay is cut while writes go on through every instance, then
 * sent to another one (or the first one is killed, or stopped in a rolling restart): the client resumes there with
 * its id, its login and every event it missed, once each and in the log's order, then live ones.
 */
export function resumeCases({ group, test, expect }: ContractTools, context: InstanceCaseContext): void {
  /** Two instances on a fresh database; `another` starts one more on it. */
  async function twoInstances(
    windowSeconds = 30
  ): Promise<[ServerInstance, ServerInstance, () => Promise<ServerInstance>]> {
    const database = await context.database()
    const another = () => database.start({ recoveryWindowSeconds: windowSeconds })
    return [await another(), await another(), another]
  }

  /** A client through a relay in front of `instance`, logged in with a JWT of a new account. */
  const readerThrough = async (instance: ServerInstance, email: string): Promise<RelayedClient> =>
    context.relayed(instance, { accessToken: await signUp(instance.url, email) })

  /** Writes one message through `instance` (awaited: the log's order is the order of these writes). */
  const write = async (instance: ServerInstance, token: string, text: string): Promise<void> => {
    expect((await call(instance.url, token, 'POST', 'messages', { text })).status).toBe(201)
  }

  const received = (reader: RelayedClient, text: string) =>
    until(`the client receives '${text}'`, () => textsOf(reader).includes(text))

  /** Writes through the instances in turn for about 3 s; answers the texts in the order written. */
  async function writeOnBoth(instances: ServerInstance[], token: string, prefix: string): Promise<string[]> {
    const written: string[] = []
    const end = Date.now() + 3000
    while (Date.now() < end || written.length < 6) {
      const text = `${prefix} ${written.length + 1}`
      await write(instances[written.length % instances.length]!, token, text)
      written.push(text)
    }
    return written
  }

  /** Writes through `instance` one at a time until `stop()`, which answers the texts acknowledged, in order. */
  function keepWriting(instance: ServerInstance, token: string, prefix: string): { stop(): Promise<string[]> } {
    const written: string[] = []
    let stopping = false
    const loop = (async () => {
      while (!stopping || written.length < 3) {
        const text = `${prefix} ${written.length + 1}`
        await write(instance, token, text)
        written.push(text)
      }
    })()
    return {
      stop: async () => {
        stopping = true
        await loop
        return written
      }
    }
  }

  /**
   * SIGTERM on `leaving` while `staying` takes the writes and the relays send reconnects to it: every reader comes
   * back on `staying`, recovered, with its id. Answers the texts written meanwhile.
   */
  async function stopUnderClients(
    leaving: ServerInstance,
    staying: ServerInstance,
    readers: RelayedClient[],
    writer: string,
    prefix: string
  ): Promise<string[]> {
    const ids = readers.map((reader) => reader.id)
    for (const reader of readers) reader.retarget(staying)
    const back = readers.map((reader) => reader.connected())
    const writes = keepWriting(staying, writer, prefix)
    expect(await leaving.stop()).toBe(0)
    await Promise.all(back)
    const written = await writes.stop()
    // Its clients' sessions were saved as lost before its store closed (not cut off by the shutdown).
    expect(leaving.logs.filter((line) => line.level >= 40 && line.operation === 'save a connection session')).toEqual(
      []
    )
    for (const [index, reader] of readers.entries()) {
      expect(reader.recovered).toBe(true)
      expect(reader.id).toBe(ids[index])
    }
    return written
  }

  group('resume', () => {
    test('a client cut off from instance A resumes on instance B: same id, logged in, every missed event once in order, then live', async () => {
      const [a, b] = await twoInstances()
      const writer = await signUp(a.url, 'writer@example.com')
      const reader = await readerThrough(a, 'reader@example.com')
      await write(b, writer, 'before')
      await received(reader, 'before')
      const id = reader.id
      const gone = reader.disconnected()
      await reader.cut()
      await gone
      const missed = await writeOnBoth([a, b], writer, 'missed')
      reader.retarget(b)
      const back = reader.connected()
      await reader.restore()
      await back
      expect(reader.recovered).toBe(true)
      expect(reader.id).toBe(id)
      await write(a, writer, 'live')
      await received(reader, 'live')
      expect(textsOf(reader)).toEqual(['before', ...missed, 'live'])
      const [error] = await reader.call('find', 'messages', { $limit: 1 })
      expect(error).toBeNull()
    }, 120_000)

    test('clients of an instance that is killed resume on the other one', async () => {
      const [a, b] = await twoInstances()
      const writer = await signUp(b.url, 'writer@example.com')
      const readers = await Promise.all([1, 2, 3].map((n) => readerThrough(a, `reader${n}@example.com`)))
      await write(b, writer, 'before')
      for (const reader of readers) await received(reader, 'before')
      const ids = readers.map((reader) => reader.id)
      for (const reader of readers) reader.retarget(b)
      const gone = readers.map((reader) => reader.disconnected())
      const back = readers.map((reader) => reader.connected())
      a.kill()
      await Promise.all(gone)
      // The clients stay away while writes go on (their reconnects are refused), then reach b.
      for (const reader of readers) await reader.cut()
      const missed = await writeOnBoth([b], writer, 'after kill')
      for (const reader of readers) await reader.restore()
      await Promise.all(back)
      await write(b, writer, 'live')
      for (const [index, reader] of readers.entries()) {
        expect(reader.recovered).toBe(true)
        expect(reader.id).toBe(ids[index])
        await received(reader, 'live')
        expect(textsOf(reader)).toEqual(['before', ...missed, 'live'])
      }
    }, 120_000)

    test("a client of a killed instance that stays away longer than the window is not resumed elsewhere: the window runs from its instance's last heartbeat", async () => {
      // A 2 s window: instances beat every 0.5 s and count as dead after 1.5 s of silence.
      const [a, b] = await twoInstances(2)
      const writer = await signUp(b.url, 'writer@example.com')
      const reader = await readerThrough(a, 'reader@example.com')
      await write(b, writer, 'before')
      await received(reader, 'before')
      const id = reader.id
      reader.retarget(b)
      const gone = reader.disconnected()
      a.kill()
      await gone
      await reader.cut()
      const killedAt = Date.now()
      await write(b, writer, 'while away')
      // Away for longer than the window after a's last heartbeat (the events are still in the log: it keeps them 61 s).
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, killedAt + 4000 - Date.now())))
      const back = reader.connected()
      await reader.restore()
      await back
      expect(reader.recovered).toBe(false)
      expect(reader.id).not.toBe(id)
      expect(textsOf(reader)).toEqual(['before'])
    }, 120_000)

    test('a rolling restart — SIGTERM on each instance in turn, a new one started in between — while clients stay connected and writes go on: every client resumes, nothing lost or doubled', async () => {
      const [a, b, another] = await twoInstances()
      const writer = await signUp(b.url, 'writer@example.com')
      await signUp(a.url, 'feathers@example.com')
      const readers = [
        ...(await Promise.all([1, 2].map((n) => readerThrough(a, `reader${n}@example.com`)))),
        await context.relayed(a, { email: 'feathers@example.com', password: PASSWORD })
      ]
      await write(b, writer, 'before')
      for (const reader of readers) await received(reader, 'before')
      // a goes down while b takes the writes; its clients come back on b.
      const first = await stopUnderClients(a, b, readers, writer, 'a stopping')
      // A new instance replaces a. The clients hear of a write made after it started, so it can replay from there.
      const c = await another()
      await write(c, writer, 'c started')
      for (const reader of readers) await received(reader, 'c started')
      // b goes down while c takes the writes; the clients come back on c.
      const second = await stopUnderClients(b, c, readers, writer, 'b stopping')
      await write(c, writer, 'live')
      for (const reader of readers) {
        await received(reader, 'live')
        expect(textsOf(reader)).toEqual(['before', ...first, 'c started', ...second, 'live'])
      }
    }, 180_000)
  })
}
