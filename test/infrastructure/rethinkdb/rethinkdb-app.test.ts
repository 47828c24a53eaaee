import { randomBytes } from 'node:crypto'
import { App } from '../../../src/application/app.js'
import type { Logger } from '../../../src/domain/logger.js'
import type { Data } from '../../../src/domain/service/service.js'
import {
  connectRethinkDb,
  type RethinkDbConnection
} from '../../../src/infrastructure/rethinkdb/rethinkdb-connection.js'
import { service, type RethinkDbService } from '../../../src/library/rethinkdb-service.js'
import { discoverRethinkDb } from '../../support/rethinkdb-server.js'
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.js'

// The RethinkDB service inside real apps: events from changefeeds, custom events, several app
// instances on one database, and a server outage. Needs a server (RETHINKDB_URL or Docker);
// without one the suite is skipped with one loud line.
const server = await discoverRethinkDb()
const withServer = server ? describe : describe.skip
let proxy: TcpProxy | undefined
let proxied: RethinkDbConnection | undefined

/** Records a service's events; `next` resolves with the first not yet taken event matching. */
function listen(app: App, path: string, events: string[]) {
  const seen: { event: string; data: Data }[] = []
  const waiters: { match: (event: string, data: Data) => boolean; resolve: (data: Data) => void }[] = []
  for (const event of events) {
    app.service(path).on(event, (data) => {
      const record = data as Data
      seen.push({ event, data: record })
      const index = waiters.findIndex((waiter) => waiter.match(event, record))
      if (index >= 0) waiters.splice(index, 1)[0]!.resolve(record)
    })
  }
  const next = (event: string, test: (data: Data) => boolean = () => true) =>
    new Promise<Data>((resolve) => waiters.push({ match: (name, data) => name === event && test(data), resolve }))
  return { seen, next }
}

const logs: string[] = []
const logger: Logger = {
  debug: () => {},
  info: (message) => logs.push(message),
  warn: (message) => logs.push(message),
  error: (message) => logs.push(message)
}

function messagesApp(table: string, options: { events?: string[] } = {}): { app: App; messages: RethinkDbService } {
  const app = new App()
  const messages = service({ Model: server!.r, db: server!.db, name: table, multi: true, logger, ...options })
  app.use('messages', messages)
  return { app, messages }
}

/** Polls a condition every 100 ms, at most 30 s; fails the test when it never holds. */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    if (await condition()) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error('condition not met within 30 s')
}

const table = () => `messages_${randomBytes(4).toString('hex')}`

afterAll(async () => {
  await proxy?.restore().catch(() => undefined)
  // The pool the outage test opened through the proxy: left open, it would keep jest from exiting.
  await proxied?.close().catch(() => undefined)
  await server?.stop()
  await proxy?.close()
})

withServer('RethinkDB service in an app', () => {
  it("emits each change once, from the changefeed, with the method's event name", async () => {
    const { app } = messagesApp(table())
    await app.setup()
    const events = listen(app, 'messages', ['created', 'updated', 'patched', 'removed'])
    const created = events.next('created')
    const record = (await app.service('messages').create({ text: 'one' })) as Data
    expect(await created).toEqual(record)
    const updated = events.next('updated')
    await app.service('messages').update(record.id as string, { text: 'two' })
    expect(await updated).toEqual({ id: record.id, text: 'two' })
    const patched = events.next('patched', (data) => data.text === 'marker')
    await app.service('messages').patch(record.id as string, { text: 'marker' })
    await patched
    expect(events.seen.map(({ event }) => event)).toEqual(['created', 'updated', 'patched'])
    await app.teardown()
  })

  it('publishes writes made directly in the database as service events', async () => {
    const name = table()
    const { app, messages } = messagesApp(name)
    await app.setup()
    await messages.store.whenWatching()
    const events = listen(app, 'messages', ['created', 'removed'])
    const created = events.next('created')
    await server!.r.db(server!.db).table(name).insert({ id: 'direct', text: 'from the admin UI' }).run()
    expect(await created).toEqual({ id: 'direct', text: 'from the admin UI' })
    await app.teardown()
  })

  it('sends custom events from a changefeed built with createQuery', async () => {
    const { app, messages } = messagesApp(table(), { events: ['archived'] })
    await app.setup()
    const feed = await messages.createQuery({ archived: true }).changes().run()
    feed.on('data', (change: { new_val?: Data | null }) => {
      if (change.new_val) app.service('messages').emit('archived', change.new_val)
    })
    const archived = new Promise<Data>((resolve) =>
      app.service('messages').on('archived', (data) => resolve(data as Data))
    )
    const record = (await app.service('messages').create({ text: 'old news', archived: false })) as Data
    await app.service('messages').patch(record.id as string, { archived: true })
    expect(await archived).toEqual({ id: record.id, text: 'old news', archived: true })
    await feed.close()
    await app.teardown()
  })

  it("lets two app instances on one database receive each other's events", async () => {
    const name = table()
    const first = messagesApp(name)
    const second = messagesApp(name)
    await Promise.all([first.app.setup(), second.app.setup()])
    await Promise.all([first.messages.store.whenWatching(), second.messages.store.whenWatching()])
    const secondEvents = listen(second.app, 'messages', ['created'])
    const firstEvents = listen(first.app, 'messages', ['patched'])
    const created = secondEvents.next('created')
    const record = (await first.app.service('messages').create({ text: 'hello from first' })) as Data
    expect(await created).toEqual(record)
    const patched = firstEvents.next('patched')
    await second.app.service('messages').patch(record.id as string, { text: 'hello from second' })
    expect(await patched).toEqual({ id: record.id, text: 'hello from second' })
    await Promise.all([first.app.teardown(), second.app.teardown()])
  })

  it('fails fast with 503 while the server is away, then reconnects and resumes the feed', async () => {
    proxy = await startTcpProxy(server!.host, server!.port)
    // From here on the pool (module-wide in rethinkdb-ts) goes through the proxy the test controls.
    proxied = await connectRethinkDb(`rethinkdb://127.0.0.1:${proxy.port}/${server!.db}`, { timeoutMs: 15_000 })
    const { app, messages } = messagesApp(table())
    await app.setup()
    await messages.store.whenWatching()
    const events = listen(app, 'messages', ['created'])

    await proxy.cut()
    const started = Date.now()
    await expect(app.service('messages').find({ paginate: false })).rejects.toMatchObject({
      name: 'Unavailable',
      code: 503
    })
    expect(Date.now() - started).toBeLessThan(5_000)
    // The feed saw the connection drop and logs that it re-opens (bounded wait for the log line).
    await until(() => logs.some((line) => /change feed .*re-opening/.test(line)))

    await proxy.restore()
    // Bounded wait for the pool to reconnect on its own (the pool reconnects by itself, as
    // docs/reference/stores/rethinkdb.md says).
    await until(() =>
      app
        .service('messages')
        .find({ paginate: false })
        .then(
          () => true,
          () => false
        )
    )
    await messages.store.whenWatching()
    const created = events.next('created', (data) => data.text === 'after the outage')
    await server!.r.db(server!.db).table(messages.store.tableName).insert({ text: 'after the outage' }).run()
    await expect(created).resolves.toMatchObject({ text: 'after the outage' })
    await app.teardown()
  }, 60_000)
})
