import { AdapterService } from '../../application/adapter-service.js'
import type { App } from '../../application/app.js'
import type { Clock } from '../../domain/clock.js'
import type { StoreFactory } from '../../domain/store/store-factory.js'
import { messagesHooks } from './messages.hooks.js'
import { messageSchemas, storedMessageSchema, type Message } from './messages.schema.js'

export interface MessagesOptions {
  stores: StoreFactory
  clock: Clock
  /** Whether the app has an authentication service (see messages.hooks.ts). */
  authentication: boolean
}

/**
 * `messages`: every method needs a token; the server sets the author and the timestamps, only the
 * author may change a message, and create takes an array. Registered on `app` with its schemas and hooks;
 * returns the service (its type is the app's `app.service('messages')`).
 */
export function useMessages(app: App, { stores, clock, authentication }: MessagesOptions): AdapterService<Message> {
  // The store may rely on the stored records' declared types (a sort by `text` is then one key); `user` is not stored.
  const service = new AdapterService(stores.create<Message>('messages', { schema: storedMessageSchema }), {
    paginate: { default: 10, max: 50 },
    multi: ['create', 'patch', 'remove']
  })
  app.use('messages', service, { schemas: messageSchemas })
  app.service('messages').hooks(messagesHooks({ clock, authentication }))
  return service
}
