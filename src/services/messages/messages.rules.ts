import type { RulesDefinition } from '../../domain/rules.js'

/**
 * Who may do and see what in `messages`, for calls and events alike (README "Rules"). Logged-in users read public
 * messages (no `to`), their own, and direct messages sent to them; only the author changes or removes a message,
 * and an admin may remove any. The server sets the author (messages.hooks.ts), so nobody writes as someone else.
 */
export const messagesRules: RulesDefinition = (user, { can }) => {
  if (!user) return
  can('read', 'messages', { to: null })
  can('read', 'messages', { userId: user.id })
  can('read', 'messages', { to: user.id })
  can('create', 'messages')
  can(['update', 'patch', 'remove'], 'messages', { userId: user.id })
  if (user.role === 'admin') can('remove', 'messages')
}
