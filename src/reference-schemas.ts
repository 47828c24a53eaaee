import type { FromSchema } from 'json-schema-to-ts'
import type { ServiceSchemas } from './domain/schema/json-schema.js'

/*
 * The reference app's schemas: each field is declared once, here. The TypeScript types of the
 * records derive from them (json-schema-to-ts), the `validateSchemas()` hook applies them, and
 * GET /openapi.json publishes them.
 */

/** Memory ids are integers, RethinkDB ids UUID strings; a REST `?userId=3` is coerced to 3. */
const id = { type: ['integer', 'string'] } as const
const timestamp = { type: 'string', format: 'date-time' } as const
const email = { type: 'string', format: 'email', maxLength: 254, transform: ['trim', 'toLowerCase'] } as const
const password = { type: 'string', minLength: 8, maxLength: 128 } as const
/** Optional display name. Nothing else may be set on a user: a `role` or `isAdmin` from a signup is refused. */
const name = { type: 'string', minLength: 1, maxLength: 100, transform: ['trim'] } as const

export const userSchema = {
  $id: 'User',
  type: 'object',
  description: 'A user as the service returns it; the password hash never leaves the server.',
  properties: { id, email, name },
  required: ['id', 'email'],
  additionalProperties: false
} as const

const userData = {
  $id: 'UserData',
  type: 'object',
  description: 'Signing up: the email is stored trimmed and lower-cased and is unique, case-insensitively.',
  properties: { email, password, name },
  required: ['email', 'password'],
  additionalProperties: false
} as const

export const userSchemas = {
  result: userSchema,
  data: userData,
  patch: { ...userData, $id: 'UserPatch', required: [] },
  query: { type: 'object', properties: { id, email, name }, additionalProperties: false }
} satisfies ServiceSchemas

/** One user as the users service returns it to a client. */
export type User = FromSchema<typeof userSchema>

const text = { type: 'string', minLength: 1, maxLength: 2000, transform: ['trim'] } as const

export const messageSchema = {
  $id: 'Message',
  type: 'object',
  description: 'A chat message. Fields beyond these are app-defined extensions a client may attach.',
  properties: { id, text, userId: id, createdAt: timestamp, updatedAt: timestamp },
  required: ['id', 'text'],
  additionalProperties: true
} as const

/** Server-owned fields: declared `false`, refused from clients (the server sets them). */
const serverOwned = { id: false, userId: false, createdAt: false, updatedAt: false } as const

export const messageSchemas = {
  result: messageSchema,
  data: {
    $id: 'MessageData',
    type: 'object',
    properties: { text, ...serverOwned },
    required: ['text'],
    additionalProperties: true
  },
  patch: {
    $id: 'MessagePatch',
    type: 'object',
    properties: { text, ...serverOwned },
    additionalProperties: true
  },
  query: {
    type: 'object',
    properties: { id, text, userId: id, createdAt: timestamp, updatedAt: timestamp },
    additionalProperties: true
  }
} satisfies ServiceSchemas

/** One message as the messages service returns it. */
export type Message = FromSchema<typeof messageSchema>
