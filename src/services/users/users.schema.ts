import type { ServiceSchemas } from '../../domain/schema/json-schema.js'
import type { SchemaType } from '../../domain/schema/schema-type.js'

/*
 * The users service's schemas: each field is declared once, here. The TypeScript type of a user
 * derives from them (SchemaType), the `validateSchemas()` hook applies them, and
 * GET /openapi.json publishes them.
 */

/** Memory ids are integers, RethinkDB ids UUID strings; a REST `?userId=3` is coerced to 3. */
const id = { type: ['integer', 'string'] } as const
/** Kept as typed (trimmed): unique and found case-insensitively through its claimed key (users.hooks.ts). */
const email = { type: 'string', format: 'email', maxLength: 254, transform: ['trim'] } as const
const password = { type: 'string', minLength: 8, maxLength: 128 } as const
/** Optional display name. Nothing else may be set on a user: a `role` or `isAdmin` from a signup is refused. */
const name = { type: 'string', minLength: 1, maxLength: 100, transform: ['trim'] } as const
/**
 * The picture the chat shows: given at signup (an https URL), else set then to the email's Gravatar, as
 * feathers-chat does (users.resolvers.ts). Optional: users stored before avatars existed have none.
 */
const avatar = { type: 'string', format: 'uri', pattern: '^https://', maxLength: 2048 } as const

export const userSchema = {
  $id: 'User',
  type: 'object',
  description: 'A user as the service returns it; the password hash never leaves the server.',
  properties: { id, email, name, avatar },
  required: ['id', 'email'],
  additionalProperties: false
} as const

const userData = {
  $id: 'UserData',
  type: 'object',
  description: 'Signing up: the email is stored as typed (trimmed) and is unique, case-insensitively.',
  properties: { email, password, name, avatar },
  required: ['email', 'password'],
  additionalProperties: false
} as const

export const userSchemas = {
  result: userSchema,
  data: userData,
  patch: { ...userData, $id: 'UserPatch', required: [] },
  query: { type: 'object', properties: { id, email, name }, additionalProperties: false }
} as const satisfies ServiceSchemas

/** One user as the users service returns it to a client. */
export type User = SchemaType<typeof userSchema>
/** What a signup sends. */
export type UserData = SchemaType<typeof userData>
