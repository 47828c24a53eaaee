import type { R } from 'rethinkdb-ts'
import type { App } from '../src/application/app.js'
import type { HookContext } from '../src/application/hook-context.js'
import { service } from '../src/infrastructure/rethinkdb/rethinkdb-service.js'

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
