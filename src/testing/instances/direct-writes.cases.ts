import type { ContractTools } from '../contract.js'
import { call, expectExactlyOnce, signUp, textsOf, threeInstances, until } from './instance-calls.js'
import type { DirectWrites, ServerInstance, SharedDatabase } from './multi-instance.contract.js'
import type { InstanceCaseContext } from './resume.cases.js'

/**
 * The `direct writes` group of the multi-instance contract: writes made in the database by-passing every
 * instance (an admin UI, a script) are published once on every instance, and replayed to a client that resumes
 * elsewhere in the log's order. Listed by a store that gives `direct` writes in its SharedDatabase.
 */
export function directWriteCases({ group, test, expect }: ContractTools, context: InstanceCaseContext): void {
  const directOf = (database: SharedDatabase): DirectWrites => {
    if (!database.direct) throw new Error('the setup gives no direct writes: do not list the direct writes cases')
    return database.direct
  }
  group('direct writes', () => {
    test('are published once on every instance, each once the one before was', async () => {
      const database = await context.database()
      const direct = directOf(database)
      const two = await Promise.all([1, 2].map(() => database.start()))
      const tokens = await Promise.all(two.map((instance, index) => signUp(instance.url, `direct${index}@example.com`)))
      const clients = await Promise.all(two.map((instance, index) => context.listen(instance.url, tokens[index]!)))
      const expected = ['created admin-1', 'created admin-2']
      await direct.insert('messages', { id: 'admin-1', text: 'from the admin UI' })
      await direct.insert('messages', { id: 'admin-2', text: 'another' })
      await expectExactlyOnce(expect, clients, expected, { settleMs: 0 })
      await direct.patch('messages', 'admin-1', { text: 'edited by hand' })
      expected.push('patched admin-1')
      await expectExactlyOnce(expect, clients, expected, { settleMs: 0 })
      await direct.remove('messages', 'admin-2')
      expected.push('removed admin-2')
      await expectExactlyOnce(expect, clients, expected)
      const edited = clients[1]!.received.find(({ event }) => event === 'patched')
      expect(edited?.data).toMatchObject({ id: 'admin-1', text: 'edited by hand' })
    }, 60_000)

    // A store whose feed squashes a record's changes made close together (RethinkDB's table feed) does not list it.
    test('back to back: a record created, changed and removed in a row publishes each change once, in order', async () => {
      const database = await context.database()
      const direct = directOf(database)
      const three = await threeInstances(database)
      const token = await signUp(three[0]!.url, 'direct@example.com')
      const clients = await Promise.all(three.map((instance) => context.listen(instance.url, token)))
      await direct.insert('messages', { id: 'admin-1', text: 'by hand' })
      await direct.patch('messages', 'admin-1', { text: 'edited' })
      await direct.remove('messages', 'admin-1')
      const expected = ['created admin-1', 'patched admin-1', 'removed admin-1']
      await expectExactlyOnce(expect, clients, expected)
      for (const client of clients)
        expect(client.received.map(({ event, data }) => `${event} ${String(data.id)} ${String(data.text)}`)).toEqual([
          'created admin-1 by hand',
          'patched admin-1 edited',
          'removed admin-1 edited'
        ])
    }, 60_000)

    test('a direct write made while a client was away reaches it when it resumes on another instance, in the log’s order', async () => {
      const database = await context.database()
      const direct = directOf(database)
      const a = await database.start({ recoveryWindowSeconds: 30 })
      const b = await database.start({ recoveryWindowSeconds: 30 })
      const writer = await signUp(b.url, 'writer@example.com')
      const reader = await context.relayed(a, { accessToken: await signUp(a.url, 'reader@example.com') })
      const witness = await context.relayed(b, { accessToken: await signUp(b.url, 'witness@example.com') })
      const write = async (instance: ServerInstance, text: string) =>
        expect((await call(instance.url, writer, 'POST', 'messages', { text })).status).toBe(201)
      await write(b, 'before')
      await until('the reader receives it', () => textsOf(reader).includes('before'))
      const gone = reader.disconnected()
      await reader.cut()
      await gone
      await write(a, 'missed 1')
      // Made by hand (an admin UI, a script): published once the store's feed of direct writes sees it.
      await direct.insert('messages', { id: 'by-hand', text: 'written directly' })
      await until('the witness receives it', () => textsOf(witness).includes('written directly'))
      await write(b, 'missed 2')
      reader.retarget(b)
      const back = reader.connected()
      await reader.restore()
      await back
      expect(reader.recovered).toBe(true)
      await write(a, 'live')
      await until('the reader receives it', () => textsOf(reader).includes('live'))
      expect(textsOf(reader)).toEqual(['before', 'missed 1', 'written directly', 'missed 2', 'live'])
      expect(textsOf(witness)).toEqual(['before', 'missed 1', 'written directly', 'missed 2', 'live'])
    }, 120_000)
  })
}
