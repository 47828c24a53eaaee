import type { JsonSchemaObject, ServiceSchemas } from '../../src/domain/schema/json-schema.js'
import { messageSchemas } from '../../src/services/messages/messages.schema.js'

/**
 * The reference app's message schemas as the benches validate with them. Their seeded messages carry a `user`
 * string of their own (seed.ts: `user3`, queried with `user[$in]`), where the reference app's `user` is the author
 * a resolver adds — server-owned, refused in data — so these leave `user` out and take it as any other field.
 */
function withoutUser(schema: JsonSchemaObject): JsonSchemaObject {
  const { user: _user, ...properties } = schema.properties ?? {}
  return { ...schema, properties }
}

export const benchMessageSchemas = {
  result: withoutUser(messageSchemas.result),
  data: withoutUser(messageSchemas.data),
  patch: withoutUser(messageSchemas.patch),
  query: messageSchemas.query
} satisfies ServiceSchemas
