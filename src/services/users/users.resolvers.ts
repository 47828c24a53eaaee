import { createHash } from 'node:crypto'
import { resolve } from '../../application/resolvers/index.js'
import type { UserData } from './users.schema.js'

/**
 * The avatar of a new user, as feathers-chat's `userDataResolver` sets it: the one given, else the Gravatar of
 * the email (the MD5 of the lower-cased address; the schema has trimmed it). Stored at signup, so the users a
 * page shows need no lookup, and users stored before avatars existed simply have none. MD5 is Gravatar's
 * choice, not a security measure. node:crypto is used here, in the service, because the application layer
 * imports the domain only; the users.schema.ts file the browser reads stays free of it.
 */
export const userDataResolver = resolve<UserData>({
  avatar: async (value, user) => value ?? gravatarOf(user.email)
})

/** Gravatar's picture of an email, 60 px (the chat's size). */
export function gravatarOf(email: string): string {
  const hash = createHash('md5').update(email.trim().toLowerCase()).digest('hex')
  return `https://s.gravatar.com/avatar/${hash}?s=60`
}
