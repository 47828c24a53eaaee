import type { LoginDescription, ServiceDescription } from '../../application/transport/index.js'
import type { JsonSchema, JsonSchemaObject } from '../../domain/schema/json-schema.js'

/*
 * The schemas the API documents share: OpenAPI (openapi-document.ts, REST) and AsyncAPI (asyncapi-document.ts,
 * socket.io) describe the same records, login bodies and errors, taken from what services were registered with.
 */

export type Schema = Record<string, unknown>

/** A service's record, data and patch schemas; each is put in `components` once and referenced. */
export interface SchemaRefs {
  result: Schema
  data: Schema
  patch: Schema
}

/**
 * The schemas a service was registered with, as references into `components` (named by their `$id`, else after the
 * path: `Messages`, `MessagesData`, `MessagesPatch`), or open objects where it has none. The patch schema defaults
 * to the data schema without `required`. OpenAPI and AsyncAPI (asyncapi-document.ts) both document records with it.
 */
export function schemaRefs(service: ServiceDescription, components: Record<string, Schema>): SchemaRefs {
  const { schemas = {} } = service
  const name = pascal(service.path)
  const open = { type: 'object', additionalProperties: true }
  return {
    result: component(components, schemas.result, `${name}`) ?? open,
    data: component(components, schemas.data, `${name}Data`) ?? open,
    patch:
      component(components, schemas.patch, `${name}Patch`) ??
      component(components, patchOf(schemas.data), `${name}Patch`) ??
      open
  }
}

/** Feathers' defaults, for an authentication service that does not describe its logins. */
const FEATHERS_LOGIN: LoginDescription = {
  strategies: [
    { name: 'jwt', fields: ['accessToken'], summary: 'an access token: re-authenticate (the same token back)' },
    { name: 'local', fields: ['email', 'password'], summary: 'username and password' }
  ],
  refreshTokens: false,
  throttled: false
}

/** What the authentication service at hand accepts and answers (its `describeLogin`, else Feathers' defaults). */
export function loginOf(service: object): LoginDescription {
  return (service as { describeLogin?: () => LoginDescription }).describeLogin?.() ?? FEATHERS_LOGIN
}

/**
 * What a login sends, one shape per strategy the service accepts (Feathers v5): local `{ strategy, email,
 * password }` (its username and password fields), jwt `{ strategy: 'jwt', accessToken }`, refresh
 * `{ strategy: 'refresh', refreshToken }`; any other strategy takes its own fields.
 */
export function authenticationRequestSchema(login: LoginDescription): Schema {
  const shapes = login.strategies.map(({ name, fields, summary }) => ({
    type: 'object',
    title: name,
    description: `Log in with ${summary}`,
    required: ['strategy', ...fields],
    properties: {
      strategy: { const: name },
      ...Object.fromEntries(fields.map((field) => [field, { type: 'string' }]))
    },
    additionalProperties: fields.length === 0
  }))
  return shapes.length === 1 ? shapes[0]! : { oneOf: shapes }
}

/**
 * What a login (and a logout) answers: the access token, how it was obtained (the strategy and the token's
 * claims), the entity (`user`, as its service shows it), and with sessions a refresh token.
 */
export function authenticationResultSchema(user: Schema, login: LoginDescription): Schema {
  return {
    type: 'object',
    required: ['accessToken', 'authentication', ...(login.refreshTokens ? ['refreshToken'] : [])],
    properties: {
      accessToken: { type: 'string', description: 'A JWT: send it as `Authorization: Bearer <accessToken>`' },
      authentication: {
        type: 'object',
        required: ['strategy'],
        properties: {
          strategy: { enum: login.strategies.map((strategy) => strategy.name) },
          accessToken: { type: 'string', description: 'jwt: the token it was given' },
          payload: { type: 'object', description: 'The claims of the access token (sub, sid, exp…)' }
        }
      },
      user,
      ...(login.refreshTokens
        ? {
            refreshToken: {
              type: 'string',
              description: "Send it as `{ strategy: 'refresh', refreshToken }` for new tokens; it works once"
            }
          }
        : {})
    }
  }
}

/** Feathers' error envelope, as REST bodies and socket acks carry it. */
export function errorSchema(): Schema {
  return {
    type: 'object',
    description:
      "Every error, in Feathers' shape. Validation errors map each field to its message in `errors` and list `{ field, rule, message }` in `data`.",
    required: ['name', 'message', 'code', 'className'],
    properties: {
      name: { type: 'string', examples: ['BadRequest'] },
      message: { type: 'string' },
      code: { type: 'integer', examples: [400] },
      className: { type: 'string', examples: ['bad-request'] },
      data: {},
      errors: { type: 'object', additionalProperties: { type: 'string' } }
    }
  }
}

function component(
  components: Record<string, Schema>,
  schema: JsonSchemaObject | undefined,
  fallback: string
): Schema | undefined {
  if (!schema) return undefined
  const name = typeof schema.$id === 'string' ? schema.$id : fallback
  components[name] ??= documented(schema) as Schema
  return { $ref: `#/components/schemas/${name}` }
}

/** A schema as documented: `$id` dropped, server-owned `false` properties spelled out. */
export function documented(schema: JsonSchema): JsonSchema {
  if (typeof schema !== 'object') return schema
  const { $id: _id, ...rest } = schema
  if (!rest.properties) return rest
  const properties: Record<string, JsonSchema> = {}
  for (const [name, property] of Object.entries(rest.properties)) {
    properties[name] =
      property === false ? { not: {}, description: 'Set by the server; refused in requests' } : documented(property)
  }
  return { ...rest, properties }
}

function patchOf(data: JsonSchemaObject | undefined): JsonSchemaObject | undefined {
  if (!data) return undefined
  const { required: _required, $id: _id, ...rest } = data
  return rest
}

const words = (path: string) => path.split(/[^A-Za-z0-9]+/).filter(Boolean)
export const pascal = (path: string) =>
  words(path)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('')

/**
 * The page a find answers when its query names `$after`, `$before` or `$count` (src/domain/query/cursor.ts):
 * the Feathers page with the cursors of the pages around it; `total` only when counted. In both documents.
 */
export function cursorPageSchema(result: Schema, sized: boolean): Schema {
  const cursor = (which: string) => ({
    type: ['string', 'null'],
    description: `The cursor of the ${which} page (pass it as \`${which === 'next' ? '$after' : '$before'}\`); null when there is none`
  })
  return {
    type: 'object',
    description: 'A page of a cursor walk (the query named $after, $before or $count)',
    required: [...(sized ? ['limit'] : []), 'skip', 'data', 'next', 'prev'],
    properties: {
      total: { type: 'integer', description: 'Every match of the query; absent with `$count=false`' },
      limit: { type: 'integer' },
      skip: { type: 'integer' },
      data: { type: 'array', items: result },
      next: cursor('next'),
      prev: cursor('previous')
    }
  }
}
