import type { RulesDefinition } from '../application/rules/index.js'
import { messagesRules } from './messages/messages.rules.js'
import { usersRules } from './users/users.rules.js'

/**
 * The app's rules, one definition per guarded service (its `<name>.rules.ts`), given to the app once by
 * createReferenceApp (`useRules`). A service not listed here is not guarded by rules.
 */
export const rules: Readonly<Record<string, RulesDefinition>> = {
  messages: messagesRules,
  users: usersRules
}
