import { createHash } from 'node:crypto'

/** The avatar the users service stores at signup for `email` (feathers-chat's Gravatar URL), computed independently. */
export function gravatar(email: string): string {
  return `https://s.gravatar.com/avatar/${createHash('md5').update(email.toLowerCase()).digest('hex')}?s=60`
}
