import { authenticate } from '../../application/authentication/hooks/authenticate.js'
import { restrictToOwner } from '../../application/authentication/hooks/restrict-to-owner.js'
import type { HookContext, HookMap } from '../../application/hook-context.js'
import { resolveResult } from '../../application/resolvers/index.js'
import { stampTimes } from '../../application/schema/stamp-times.js'
import { validateSchemas } from '../../application/schema/validate-schemas.js'
import type { Clock } from '../../domain/clock.js'
import { messageResolver } from './messages.resolvers.js'

export interface MessagesHooksOptions {
  /** Stamps createdAt/updatedAt. */
  clock: Clock
  /** With the authentication service: every method needs a token and only the author may change a message. */
  authentication: boolean
}

/** Before create/update/patch: the logged-in user is the author (refused from clients by the schema). */
export function recordAuthor(context: HookContext): void {
  const userId = context.params.user?.id
  if (userId === undefined) return
  const stamp = (item: unknown) => ({ ...(item as object), userId })
  context.data = Array.isArray(context.data) ? context.data.map(stamp) : stamp(context.data)
}

/**
 * The messages service's hooks: log in, validate, then the server sets the author and the timestamps; every
 * result (and event) carries its author as `user`, resolved around everything else.
 */
export function messagesHooks({ clock, authentication }: MessagesHooksOptions): HookMap {
  const login = authentication ? [authenticate('jwt')] : []
  // The ownership example: only the author changes a message (403 otherwise).
  const author = authentication ? [restrictToOwner({ ownerField: 'userId' })] : []
  const stamp = stampTimes(clock)
  // recordAuthor also on update/patch, so an author can neither drop nor hand over authorship.
  return {
    around: { all: [resolveResult(messageResolver)] },
    before: {
      all: [...login, validateSchemas()],
      create: [recordAuthor, stamp],
      update: [...author, recordAuthor, stamp],
      patch: [...author, recordAuthor, stamp],
      remove: [...author]
    }
  }
}
