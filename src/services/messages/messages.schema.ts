import type { ServiceSchemas } from '../../domain/schema/json-schema.js'
import type { SchemaType } from '../../domain/schema/schema-type.js'
import { userSchema } from '../users/users.schema.js'

/*
 * The messages service's schemas: each field is declared once, here. The TypeScript type of a
 * message derives from them (SchemaType), the `validateSchemas()` hook applies them, and
 * GET /openapi.json publishes them.
 */

/** Memory ids are integers, RethinkDB ids UUID strings; a REST `?userId=3` is coerced to 3. */
const id = { type: ['integer', 'string'] } as const
const timestamp = { type: 'string', format: 'date-time' } as const
const text = { type: 'string', minLength: 1, maxLength: 2000, transform: ['trim'] } as const

const stored = { id, text, userId: id, createdAt: timestamp, updatedAt: timestamp } as const

/** A message as the store keeps it: what the store may rely on (its `schema` option). */
export const storedMessageSchema = {
  type: 'object',
  properties: stored,
  required: ['id', 'text'],
  additionalProperties: true
} as const

/** The author, as the users service shows them (its result schema, inlined: a `$id` may be declared once). */
const { $id: _userId, ...author } = userSchema

export const messageSchema = {
  $id: 'Message',
  type: 'object',
  description: 'A chat message. Fields beyond these are app-defined extensions a client may attach.',
  properties: {
    ...stored,
    user: { ...author, description: 'The author (userId), resolved by the server: never stored, never sent' }
  },
  required: ['id', 'text'],
  additionalProperties: true
} as const

/** Server-owned fields: declared `false`, refused from clients (the server sets them). */
const serverOwned = { id: false, userId: false, createdAt: false, updatedAt: false, user: false } as const

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
    properties: stored,
    additionalProperties: true
  }
} as const satisfies ServiceSchemas

/** One message as the messages service returns it, its author (`user`) included. */
export type Message = SchemaType<typeof messageSchema>
