import { AdapterService } from '../../src/application/adapter-service.js'
import { App } from '../../src/application/app.js'
import { loaderFor, resolve, resolveResult, virtual } from '../../src/application/resolvers/index.js'
import type { Data } from '../../src/domain/service/service.js'
import { InMemoryStore } from '../../src/infrastructure/memory/in-memory-store.js'
import { expressEngine } from '../../src/interfaces/rest/rest-app.js'
import { announce, seedRecords } from './seed.js'

/**
 * The server of bench:rest's resolver rows: 20 users and the seeded 1000 messages (each with a `userId`) on the
 * memory store, served three ways from one store — `messages` as stored, `populated` with each message's author
 * through the per-call loader (src/application/resolvers), `per-record` with one `users.get` per message as a
 * Feathers resolver would write it. `GET /reads` answers how many reads the users' store has answered so far.
 */
type Message = { userId?: number; user?: Data } & Data

class CountingStore<T extends Data> extends InMemoryStore<T> {
  reads = 0
  override find(...args: Parameters<InMemoryStore<T>['find']>) {
    this.reads++
    return super.find(...args)
  }
  override page(...args: Parameters<InMemoryStore<T>['page']>) {
    this.reads++
    return super.page(...args)
  }
  override get(...args: Parameters<InMemoryStore<T>['get']>) {
    this.reads++
    return super.get(...args)
  }
}

const app = new App()
const users = new CountingStore()
app.use('users', new AdapterService(users, { paginate: { default: 10, max: 50 } }))
const messages = new InMemoryStore()
const paging = { paginate: { default: 10, max: 50 } }
app.use('messages', new AdapterService(messages, paging))
app.use('populated', new AdapterService(messages, paging))
app.use('per-record', new AdapterService(messages, paging))
app.use('reads', { find: async () => ({ users: users.reads }) })

const batched = resolve<Message>({
  user: virtual(async (message, context) =>
    message.userId === undefined ? undefined : loaderFor(context, 'users').load(message.userId)
  )
})
const oneByOne = resolve<Message>({
  user: virtual(async (message, context) =>
    message.userId === undefined ? undefined : context.app.service('users').get(message.userId)
  )
})
app.service('populated').hooks({ around: { all: [resolveResult(batched)] } })
app.service('per-record').hooks({ around: { all: [resolveResult(oneByOne)] } })

await app.setup()
for (let n = 0; n < 20; n++) await app.service('users').create({ email: `user${n}@example.com`, name: `user${n}` })
let index = 0
for (const record of seedRecords()) await app.service('messages').create({ ...record, userId: index++ % 20 })
const { server } = await expressEngine(app, {}).listen(0, '127.0.0.1')
announce((server.address() as { port: number }).port)
process.once('SIGTERM', () => process.exit(0))
