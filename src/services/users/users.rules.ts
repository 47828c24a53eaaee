import type { RulesDefinition } from '../../domain/rules.js'

/** The fields anyone may give themselves; `role` is not one of them. */
const OWN_FIELDS = ['email', 'password', 'name']

/**
 * Who may do and see what in `users` (README "Rules"). Anyone signs up, without a role; logged-in users read
 * every user (the password hash never leaves: `protect('password')`), change and remove only themselves, and
 * only an admin sets a role, on anyone.
 */
export const usersRules: RulesDefinition = (user, { can }) => {
  can('create', 'users', OWN_FIELDS)
  if (!user) return
  can('read', 'users')
  can(['update', 'patch'], 'users', OWN_FIELDS, { id: user.id })
  can('remove', 'users', { id: user.id })
  if (user.role === 'admin') can(['create', 'update', 'patch'], 'users', ['role'])
}
