import type { R } from 'rethinkdb-ts'
import { App } from '../src/application/app.js'
import type { HookContext } from '../src/application/hook-context.js'
import type { Data, Id } from '../src/domain/service/service.js'
import { connectRethinkDb, parseRethinkDbUrl, service } from '../src/library/rethinkdb.js'

/** A `messages` service straight on a RethinkDB table, with the spec's service(options) API. */
export async function useRethinkDbMessages(app: App, r: R, db = 'chat'): Promise<void> {
  const messages = service({ Model: r, name: 'messages', db, paginate: { default: 10, max: 50 } })
  await messages.init() // creates the database and the table when missing
  app.use('messages', messages)
  // params.rethinkdb replaces find's base query; createQuery applies the common filters to it.
  const unreadOnly = (context: HookContext) => {
    context.params.rethinkdb = messages.createQuery({ read: { $ne: true } })
  }
  app.service('messages').hooks({ before: { find: [unreadOnly] } })
}

// `npm run example -- rethinkdb-service [url]`: the service on a running RethinkDB (default
// rethinkdb://127.0.0.1:28015/plumage_example); it removes the messages it wrote.
export async function main(url = 'rethinkdb://127.0.0.1:28015/plumage_example'): Promise<void> {
  const connection = await connectRethinkDb(url, { timeoutMs: 10_000 })
  try {
    const app = new App()
    await useRethinkDbMessages(app, connection.r, parseRethinkDbUrl(url).db)
    await app.setup()
    const messages = app.service('messages')
    const written = [
      await messages.create({ text: 'read already', read: true }, {}),
      await messages.create({ text: 'still unread' }, {})
    ] as Data[]
    console.log('created', written)
    console.log(
      'found (unread only)',
      await messages.find({ query: { id: { $in: written.map((message) => message.id) } } })
    )
    for (const message of written) await messages.remove(message.id as Id, {})
    await app.teardown()
  } finally {
    await connection.close()
  }
}
