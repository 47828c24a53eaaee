import { loaderFor, resolve, virtual } from '../../application/resolvers/index.js'
import type { User } from '../users/users.schema.js'
import type { Message } from './messages.schema.js'

/**
 * A message's author, as feathers-chat's `messageResolver` adds it — through the per-call loader instead of one
 * `users.get` per message: the 25 messages of a page are one query of the users service. The loader asks as the
 * caller (a user another caller could not see is left out) and keeps to the User schema (never the password).
 */
export const messageResolver = resolve<Message>({
  user: virtual(async (message, context) =>
    message.userId === undefined ? undefined : loaderFor<User>(context, 'users').load(message.userId)
  )
})
