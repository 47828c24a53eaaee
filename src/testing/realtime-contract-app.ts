import { App } from '../application/app.js'
import { BadRequest, NotAuthenticated, NotFound } from '../domain/errors/errors.js'
import type { Connection, Data, NullableId, Params } from '../domain/service/service.js'

/** The users the contract's authentication service knows, and the tokens it hands out (`token-<id>`). */
const USERS: Data[] = [
  { id: 1, email: 'ann@example.com', password: 'ann-secret' },
  { id: 2, email: 'bob@example.com', password: 'bob-secret' }
]
const publicUser = ({ password: _password, ...user }: Data) => user

/**
 * The app every transport serves in the contract: a `messages` service (all methods, a custom
 * `shout`), `whoami` (what a call's params say about its connection), `failing` (errors), `notices`
 * (events for everybody), an authentication service with the contract of the real one (create logs
 * in with `local` or `jwt`, remove logs out, both announced as the app's `login`/`logout` events with
 * the connection), and the channels of a generated Feathers app.
 */
export function realtimeContractApp(): App {
  const app = new App()
  const messages = new Map<number, Data>()
  let nextId = 0
  const found = (id: NullableId) => {
    const message = messages.get(Number(id))
    if (!message) throw new NotFound(`No record found for id '${String(id)}'`)
    return message
  }
  app.use(
    'messages',
    {
      async find(params: Params) {
        return [...messages.values()].filter((message) =>
          Object.entries(params.query ?? {}).every(([key, value]) => message[key] === value)
        )
      },
      async get(id: NullableId) {
        return found(id)
      },
      async create(data: Data) {
        const message = { ...data, id: nextId++ }
        messages.set(message.id, message)
        return message
      },
      async update(id: NullableId, data: Data) {
        found(id)
        const message = { ...data, id: Number(id) }
        messages.set(message.id, message)
        return message
      },
      async patch(id: NullableId, data: Data) {
        const message = { ...found(id), ...data }
        messages.set(message.id as number, message)
        return message
      },
      async remove(id: NullableId) {
        const message = found(id)
        messages.delete(message.id as number)
        return message
      },
      async shout(data: Data) {
        return { shouted: String(data.text).toUpperCase() }
      }
    },
    { methods: ['find', 'get', 'create', 'update', 'patch', 'remove', 'shout'] }
  )
  app.use('whoami', {
    async find(params: Params) {
      return { provider: params.provider, user: params.user ?? null, query: params.query }
    }
  })
  app.use('failing', {
    async find() {
      throw new Error('Secret internal detail')
    },
    async get(id: NullableId) {
      throw new BadRequest('Not a good id', { id })
    }
  })
  app.use('notices', {
    async create(data: Data) {
      return data
    }
  })
  app.use('authentication', {
    async create(data: Data, params: Params) {
      const user =
        data.strategy === 'local'
          ? USERS.find(({ email, password }) => email === data.email && password === data.password)
          : USERS.find(({ id }) => data.strategy === 'jwt' && data.accessToken === `token-${String(id)}`)
      if (!user) throw new NotAuthenticated('Invalid login')
      const result = {
        accessToken: `token-${String(user.id)}`,
        authentication: { strategy: data.strategy, payload: { sub: String(user.id) } },
        user: publicUser(user)
      }
      app.emit('login', result, { provider: params.provider, connection: params.connection })
      return result
    },
    async remove(_id: NullableId, params: Params) {
      const user = USERS.find(({ id }) => params.authentication?.accessToken === `token-${String(id)}`)
      if (!user) throw new NotAuthenticated('Not logged in')
      const result = { accessToken: params.authentication!.accessToken, user: publicUser(user) }
      app.emit('logout', result, { provider: params.provider, connection: params.connection })
      return result
    }
  })
  app.on('connection', (connection: Connection) => {
    app.channel('everybody').join(connection)
    // A handshake login happens before the connection opens: it is in 'authenticated' already.
    if (!connection.authentication) app.channel('anonymous').join(connection)
  })
  app.on('login', (_result: unknown, { connection }: { connection?: Connection } = {}) => {
    if (!connection) return
    app.channel('anonymous').leave(connection)
    app.channel('authenticated').join(connection)
  })
  app.on('logout', (_result: unknown, { connection }: { connection?: Connection } = {}) => {
    if (!connection) return
    app.channel('authenticated').leave(connection)
    app.channel('anonymous').join(connection)
  })
  app.service('messages').publish(() => app.channel('authenticated'))
  app.service('notices').publish(() => app.channel('everybody'))
  return app
}
