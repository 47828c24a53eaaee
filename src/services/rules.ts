import type { RulesDefinition } from '../domain/rules.js'
import { messagesRules } from './messages/messages.rules.js'
import { usersRules } from './users/users.rules.js'

/**
 * The app's rules, one definition per guarded service (its `<name>.rules.ts`), given to the app once by the rules
 * module (src/modules/rules.ts). A service not listed here is not guarded by rules.
 */
export const rules: Readonly<Record<string, RulesDefinition>> = {
  messages: messagesRules,
  users: usersRules
}
