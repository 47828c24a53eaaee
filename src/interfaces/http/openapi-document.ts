import { AUTHENTICATES, UNIQUE_FIELD, type App, type ServiceDescription } from '../../application/transport/index.js'
import type { JsonSchema, JsonSchemaObject, ServiceSchemas } from '../../domain/schema/json-schema.js'
import { isStandardMethod } from '../../domain/service/method-layout.js'
import type { PaginationOptions } from '../../domain/service/service.js'

export interface OpenApiOptions {
  title: string
  version: string
  description?: string
  /** Path of the authentication service, documented as login/logout (default 'authentication'). */
  authenticationPath?: string
  /** The service logins return an entity of (default 'users'). */
  entityPath?: string
}

export type Schema = Record<string, unknown>
type Operation = Record<string, unknown>

const ERROR_REF = { $ref: '#/components/schemas/Error' }
const RANGE_OPERATORS = ['$ne', '$lt', '$lte', '$gt', '$gte'] as const
const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid data or query (every failing field is listed in `errors` and `data`)',
  401: 'Not authenticated: a missing, invalid or expired access token',
  403: 'Forbidden: not the owner of the record',
  404: 'No record with this id',
  405: 'The method, or acting on several records, is not allowed here',
  409: 'Conflict: a unique value is already taken'
}

/**
 * The OpenAPI 3.1 document of an app, generated from what is registered: every service's external
 * methods with their REST routes, the schemas it was registered with (records, data, patch data,
 * query fields with every query operator), pagination envelopes, multi-record create/patch/remove,
 * Feathers' error responses, and bearer-token security wherever an `authenticate` hook runs.
 */
export function openApiDocument(app: App, options: OpenApiOptions): Schema {
  const authPath = options.authenticationPath ?? 'authentication'
  const components: Record<string, Schema> = { Error: errorSchema() }
  const paths: Record<string, Record<string, Operation>> = {}
  const tags: Schema[] = []
  const services = app.describe().filter((service) => service.methods.length > 0)
  const refs = new Map<string, Schema>()
  // The authentication service last: its answer embeds the entity service's record schema.
  for (const service of [
    ...services.filter((s) => s.path !== authPath),
    ...services.filter((s) => s.path === authPath)
  ]) {
    tags.push({ name: service.path })
    const routes =
      service.path === authPath
        ? authenticationOperations(service, refs.get(options.entityPath ?? 'users') ?? { type: 'object' })
        : serviceOperations(service, components, refs)
    for (const [route, operations] of Object.entries(routes)) paths[route] = { ...paths[route], ...operations }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: options.title,
      version: options.version,
      ...(options.description ? { description: options.description } : {})
    },
    tags,
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'The accessToken of POST /authentication'
        }
      }
    }
  }
}

function serviceOperations(
  service: ServiceDescription,
  components: Record<string, Schema>,
  results: Map<string, Schema>
): Record<string, Record<string, Operation>> {
  const { path, schemas = {} } = service
  const options =
    (service.service as { options?: { paginate?: false | PaginationOptions; multi?: boolean | string[] } }).options ??
    {}
  const multi = (method: string) =>
    options.multi === true || (Array.isArray(options.multi) && options.multi.includes(method))
  const refs = schemaRefs(service, components)
  results.set(path, refs.result)
  const collection = `/${routePath(path)}`
  const item = `${collection}/{id}`
  const routeParams = [...path.matchAll(/:(\w+)/g)].map((match) => ({
    name: match[1],
    in: 'path',
    required: true,
    schema: { type: 'string' }
  }))
  const idParam = {
    name: 'id',
    in: 'path',
    required: true,
    description: 'The record id',
    schema: { type: ['integer', 'string'] }
  }
  const query = queryParameters(schemas, storeOperators(service.service))
  const has = (method: string) => service.methods.includes(method)
  const op = (method: string, operation: Operation, statuses: number[]): Operation => {
    const chain = service.hooks(method)
    const authenticated = chain.before.some((hook) => AUTHENTICATES in hook)
    const unique = chain.before.some((hook) => UNIQUE_FIELD in hook)
    const errors = [400, ...(authenticated ? [401] : []), ...statuses, ...(unique ? [409] : [])]
    const responses = operation.responses as Record<string, unknown>
    for (const status of errors) responses[status] = { description: STATUS_TEXT[status], content: json(ERROR_REF) }
    return {
      tags: [path],
      operationId: `${camel(path)}_${method}${operation.operationIdSuffix ?? ''}`,
      ...withoutKey(operation, 'operationIdSuffix'),
      ...(authenticated ? { security: [{ bearerAuth: [] }] } : {})
    }
  }
  // A page has a limit when a size bounds it: the service's default or max, or the query's $limit.
  const sized = options.paginate && (options.paginate.default !== undefined || options.paginate.max !== undefined)
  const page = options.paginate
    ? {
        anyOf: [
          {
            type: 'object',
            description: 'A page (Feathers)',
            required: sized ? ['total', 'limit', 'skip', 'data'] : ['total', 'skip', 'data'],
            properties: {
              total: { type: 'integer' },
              limit: { type: 'integer' },
              skip: { type: 'integer' },
              data: { type: 'array', items: refs.result }
            }
          },
          cursorPageSchema(refs.result, sized === true)
        ]
      }
    : { type: 'array', items: refs.result }
  const routes: Record<string, Record<string, Operation>> = { [collection]: {}, [item]: {} }
  const c = routes[collection]!
  const i = routes[item]!
  if (has('find'))
    c.get = op(
      'find',
      {
        summary: `Find ${path}`,
        parameters: [...routeParams, ...query],
        responses: {
          200: { description: options.paginate ? 'A page of records' : 'The matching records', content: json(page) }
        }
      },
      []
    )
  if (has('create')) {
    const body = multi('create') ? { oneOf: [refs.data, { type: 'array', items: refs.data }] } : refs.data
    c.post = op(
      'create',
      {
        summary: `Create ${multi('create') ? 'one or several records' : 'a record'} in ${path}`,
        parameters: routeParams,
        requestBody: { required: true, content: json(body) },
        responses: {
          201: {
            description: 'Created',
            content: json(
              multi('create') ? { oneOf: [refs.result, { type: 'array', items: refs.result }] } : refs.result
            )
          }
        }
      },
      multi('create') ? [] : [405]
    )
  }
  if (has('patch') && multi('patch'))
    c.patch = op(
      'patch',
      {
        operationIdSuffix: 'Many',
        summary: `Patch every record of ${path} that matches the query`,
        parameters: [...routeParams, ...query],
        requestBody: { required: true, content: json(refs.patch) },
        responses: { 200: { description: 'The patched records', content: json({ type: 'array', items: refs.result }) } }
      },
      []
    )
  if (has('remove') && multi('remove'))
    c.delete = op(
      'remove',
      {
        operationIdSuffix: 'Many',
        summary: `Remove every record of ${path} that matches the query`,
        parameters: [...routeParams, ...query],
        responses: { 200: { description: 'The removed records', content: json({ type: 'array', items: refs.result }) } }
      },
      []
    )
  if (has('get'))
    i.get = op(
      'get',
      {
        summary: `Get one record of ${path}`,
        parameters: [...routeParams, idParam],
        responses: { 200: { description: 'The record', content: json(refs.result) } }
      },
      [404]
    )
  if (has('update'))
    i.put = op(
      'update',
      {
        summary: `Replace one record of ${path}`,
        parameters: [...routeParams, idParam],
        requestBody: { required: true, content: json(refs.data) },
        responses: { 200: { description: 'The replaced record', content: json(refs.result) } }
      },
      [403, 404]
    )
  if (has('patch'))
    i.patch = op(
      'patch',
      {
        summary: `Patch one record of ${path}`,
        parameters: [...routeParams, idParam],
        requestBody: { required: true, content: json(refs.patch) },
        responses: { 200: { description: 'The patched record', content: json(refs.result) } }
      },
      [403, 404]
    )
  if (has('remove'))
    i.delete = op(
      'remove',
      {
        summary: `Remove one record of ${path}`,
        parameters: [...routeParams, idParam],
        responses: { 200: { description: 'The removed record', content: json(refs.result) } }
      },
      [403, 404]
    )
  const custom = service.methods.filter((method) => !isStandardMethod(method))
  if (custom.length > 0) {
    const callable = op(
      custom[0]!,
      {
        summary: `Call ${custom.map((method) => `\`${method}\``).join(', ')} on ${path}`,
        parameters: routeParams,
        responses: {}
      },
      [405]
    )
    c.post = withCustomMethods(c.post, custom, { ...callable, operationId: `${camel(path)}_custom` })
  }
  for (const route of [collection, item]) if (Object.keys(routes[route]!).length === 0) delete routes[route]
  return routes
}

/**
 * Custom methods share `POST /<path>` with create, as on the wire: OpenAPI has one operation per path and verb, so
 * the `X-Service-Method` header (absent for create) names the method, the body is its data (any JSON: services
 * declare no schema for it) and the answer is a 200 with whatever it returns.
 */
function withCustomMethods(create: Operation | undefined, methods: string[], callable: Operation): Operation {
  const post = create ?? callable
  const body = { description: 'The data of a custom method', additionalProperties: true }
  const createBody = (create?.requestBody as { content?: Record<string, { schema: unknown }> } | undefined)?.content
  return {
    ...post,
    summary: create ? `${String(create.summary)}, or call a custom method` : callable.summary,
    parameters: [
      ...((post.parameters as unknown[] | undefined) ?? []),
      {
        name: 'X-Service-Method',
        in: 'header',
        required: !create,
        description: `The custom method to call${create ? '; without it, POST creates' : ''}`,
        schema: { enum: methods }
      }
    ],
    requestBody: {
      required: true,
      content: json(createBody ? { anyOf: [createBody['application/json']!.schema, body] } : body)
    },
    responses: {
      ...(post.responses as Record<string, unknown>),
      200: { description: 'What the custom method returned', content: json({}) },
      ...(callable.responses as Record<string, unknown>)
    },
    ...((post.security ?? callable.security) ? { security: post.security ?? callable.security } : {})
  }
}

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

/** What a login sends: local (email + password) or jwt (an access token), the Feathers v5 shapes. */
export function authenticationRequestSchema(): Schema {
  return {
    oneOf: [
      {
        type: 'object',
        title: 'local',
        required: ['strategy', 'email', 'password'],
        properties: { strategy: { const: 'local' }, email: { type: 'string' }, password: { type: 'string' } }
      },
      {
        type: 'object',
        title: 'jwt',
        required: ['strategy', 'accessToken'],
        properties: { strategy: { const: 'jwt' }, accessToken: { type: 'string' } }
      }
    ]
  }
}

/** What a login (and a logout) answers: the access token, how it was obtained, and the entity (`user`). */
export function authenticationResultSchema(user: Schema): Schema {
  return {
    type: 'object',
    required: ['accessToken', 'authentication'],
    properties: {
      accessToken: { type: 'string', description: 'A JWT: send it as `Authorization: Bearer <accessToken>`' },
      authentication: { type: 'object', properties: { strategy: { type: 'string' }, payload: { type: 'object' } } },
      user
    }
  }
}

/** Login (`create` with a strategy) and logout (`remove`), the Feathers v5 shapes. */
function authenticationOperations(
  service: ServiceDescription,
  user: Schema
): Record<string, Record<string, Operation>> {
  const collection = `/${routePath(service.path)}`
  const result = authenticationResultSchema(user)
  const request = authenticationRequestSchema()
  const error = (status: number, description: string) => ({ [status]: { description, content: json(ERROR_REF) } })
  const operations: Record<string, Operation> = {}
  if (service.methods.includes('create')) {
    operations.post = {
      tags: [service.path],
      operationId: `${camel(service.path)}_create`,
      summary: 'Log in: local (email + password) or jwt (re-authenticate)',
      requestBody: { required: true, content: json(request) },
      responses: {
        201: { description: 'Logged in', content: json(result) },
        ...error(400, STATUS_TEXT[400]!),
        ...error(401, 'Invalid login')
      }
    }
  }
  if (service.methods.includes('remove')) {
    operations.delete = {
      tags: [service.path],
      operationId: `${camel(service.path)}_remove`,
      summary: 'Log out',
      security: [{ bearerAuth: [] }],
      responses: { 200: { description: 'Logged out', content: json(result) }, ...error(401, STATUS_TEXT[401]!) }
    }
  }
  return { [collection]: operations }
}

/**
 * The page a find answers when its query names `$after`, `$before` or `$count` (src/domain/query/cursor.ts):
 * the Feathers page with the cursors of the pages around it; `total` only when counted. Shared with AsyncAPI.
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

/** `$limit`, `$skip`, `$sort`, `$select`, the cursor parameters, then each declared field with every operator. */
function queryParameters(schemas: ServiceSchemas, operators: readonly string[]): Schema[] {
  const parameters: Schema[] = [
    {
      name: '$limit',
      in: 'query',
      description: "Page size (capped by the service's maximum; 0 returns only the total)",
      schema: { type: 'integer', minimum: 0 }
    },
    { name: '$skip', in: 'query', description: 'Number of records to skip', schema: { type: 'integer', minimum: 0 } },
    {
      name: '$after',
      in: 'query',
      description:
        "The page after this cursor (a page's `next`; empty: the first page); keep the query and `$sort` of the walk",
      schema: { type: 'string' }
    },
    {
      name: '$before',
      in: 'query',
      description: "The page before this cursor (a page's `prev`; empty: the last page)",
      schema: { type: 'string' }
    },
    {
      name: '$count',
      in: 'query',
      description: '`false` leaves `total` out of the page (no count of every match); the page carries cursors',
      schema: { type: 'boolean' }
    },
    {
      name: '$sort',
      in: 'query',
      style: 'deepObject',
      explode: true,
      description: 'Sort by fields: `$sort[field]=1` ascending, `-1` descending',
      schema: { type: 'object', additionalProperties: { enum: [1, -1, '1', '-1', 'asc', 'desc'] } }
    },
    {
      name: '$select',
      in: 'query',
      style: 'form',
      explode: true,
      description: 'Only these fields (the id is always returned)',
      schema: { type: 'array', items: { type: 'string' } }
    }
  ]
  const query = schemas.query
  if (!query) {
    parameters.push({
      name: 'filter',
      in: 'query',
      style: 'form',
      explode: true,
      description: 'Any field as `field=value` or `field[$operator]=value`',
      schema: { type: 'object', additionalProperties: true }
    })
    return parameters
  }
  for (const [field, property] of Object.entries(query.properties ?? {})) {
    const schema = documented(property)
    parameters.push({ name: field, in: 'query', description: `${field} equals`, schema })
    for (const operator of RANGE_OPERATORS)
      parameters.push({
        name: `${field}[${operator}]`,
        in: 'query',
        description: `${field} ${operator.slice(1)}`,
        schema
      })
    for (const operator of ['$in', '$nin'])
      parameters.push({
        name: `${field}[${operator}]`,
        in: 'query',
        style: 'form',
        explode: true,
        description: `${field} is ${operator === '$in' ? 'one' : 'none'} of the values`,
        schema: { type: 'array', items: schema }
      })
    if (operators.includes('$search') && isStringy(property))
      parameters.push({
        name: `${field}[$search]`,
        in: 'query',
        description: `${field} matches the regular expression (RE2)`,
        schema: { type: 'string' }
      })
  }
  if (query.additionalProperties !== false) {
    parameters.push({
      name: 'extensions',
      in: 'query',
      style: 'form',
      explode: true,
      description: 'Other (app-defined) fields, queried as sent',
      schema: { type: 'object', additionalProperties: true }
    })
  }
  return parameters
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
function documented(schema: JsonSchema): JsonSchema {
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

function storeOperators(service: object): readonly string[] {
  const adapter = service as { options?: { operators?: string[] }; store?: { operators?: readonly string[] } }
  return adapter.options?.operators ?? adapter.store?.operators ?? []
}

function isStringy(schema: JsonSchema): boolean {
  if (typeof schema !== 'object') return false
  return schema.type === 'string' || (Array.isArray(schema.type) && schema.type.includes('string'))
}

const json = (schema: unknown) => ({ 'application/json': { schema } })
const routePath = (path: string) => path.replace(/:(\w+)/g, '{$1}')
const words = (path: string) => path.split(/[^A-Za-z0-9]+/).filter(Boolean)
export const pascal = (path: string) =>
  words(path)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('')
const camel = (path: string) => {
  const name = pascal(path)
  return name[0]!.toLowerCase() + name.slice(1)
}

function withoutKey(object: Operation, key: string): Operation {
  const { [key]: _removed, ...rest } = object
  return rest
}
