import { authenticate } from '@feathersjs/authentication'
import { hooks as localHooks } from '@feathersjs/authentication-local'
import expressModule, { errorHandler, json, notFound, rest, urlencoded } from '@feathersjs/express'
import { feathers, type Application, type HookContext } from '@feathersjs/feathers'
import { MemoryService } from '@feathersjs/memory'
import socketio from '@feathersjs/socketio'
import type { Channel, RealTimeConnection } from '@feathersjs/transport-commons'
import { feathersAuthenticationService } from './feathers-auth.js'

export interface FeathersReferenceAppOptions {
  /** Runs before any service is registered: where plugins that add service mixins (feathers-sync) go. */
  configure?: (app: Application) => void
  /** bcrypt cost of the local strategy (Feathers' default 10). */
  hashSize?: number
  /** The service behind `users` and `messages` (default: @feathersjs/memory, each instance its own data). */
  service?: (name: 'users' | 'messages', options: ServiceOptions) => unknown
}

/** What the reference app asks of every service it registers. */
export interface ServiceOptions {
  paginate: { default: number; max: number }
  multi?: string[]
}

/**
 * What `node dist/plumage.mjs` serves (src/reference-app.ts), built the Feathers v5 way: express REST +
 * socket.io, memory services, local + JWT authentication, `messages` behind a JWT, `users` with open
 * signup, the generated app's channels. A generated app loads more than this (configuration, schemas,
 * a logger), so as an anchor it is the generous one. Not listening yet.
 */
export function createFeathersReferenceApp({
  configure,
  hashSize,
  service = (_, options) => new MemoryService(options)
}: FeathersReferenceAppOptions = {}) {
  // A CommonJS module: its exports object is the function and also carries it as `default`.
  const app = expressModule.default(feathers())
  app.use(json())
  app.use(urlencoded({ extended: true }))
  app.configure(rest())
  app.configure(socketio())
  configure?.(app as unknown as Application)
  app.use('authentication', feathersAuthenticationService(app as unknown as Application))
  if (hashSize !== undefined) {
    // The strategies read their settings when used, so this applies to every hash and login.
    const settings = app.get('authentication') as { local: Record<string, unknown> }
    app.set('authentication', { ...settings, local: { ...settings.local, hashSize } })
  }
  app.use('users', service('users', { paginate: { default: 10, max: 50 } }) as never)
  app.use('messages', service('messages', { paginate: { default: 10, max: 50 }, multi: ['patch', 'remove'] }) as never)
  const jwt = authenticate('jwt')
  app.service('users').hooks({
    before: {
      find: [jwt],
      get: [jwt],
      update: [jwt, localHooks.hashPassword('password')],
      patch: [jwt, localHooks.hashPassword('password')],
      remove: [jwt],
      create: [localHooks.hashPassword('password')]
    },
    after: { all: [localHooks.protect('password')] }
  })
  app.service('messages').hooks({
    before: {
      all: [jwt],
      create: [
        (context: HookContext) => {
          context.data = { ...context.data, userId: context.params.user?.id }
        }
      ]
    }
  })
  const channels = app as unknown as { channel(name: string): Channel; publish(fn: () => Channel): void }
  app.on('connection', (connection: RealTimeConnection) => channels.channel('anonymous').join(connection))
  app.on('login', (_result: unknown, { connection }: { connection?: RealTimeConnection }) => {
    if (!connection) return
    channels.channel('anonymous').leave(connection)
    channels.channel('authenticated').join(connection)
  })
  channels.publish(() => channels.channel('authenticated'))
  app.use(notFound())
  app.use(errorHandler({ logger: false }))
  return app
}
