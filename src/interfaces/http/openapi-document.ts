import {
  AUTHENTICATES,
  UNIQUE_FIELD,
  declaredStatuses,
  type App,
  type ServiceDescription
} from '../../application/transport/index.js'
import type { JsonSchema, ServiceSchemas } from '../../domain/schema/json-schema.js'
import { isStandardMethod } from '../../domain/service/method-layout.js'
import type { PaginationOptions } from '../../domain/service/service.js'
import {
  authenticationRequestSchema,
  authenticationResultSchema,
  cursorPageSchema,
  documented,
  errorSchema,
  loginOf,
  pascal,
  schemaRefs,
  type Schema
} from './api-schemas.js'
import { BODY_ERRORS, SERVER_ERRORS, errorComponents, errorResponses } from './openapi-errors.js'

export interface OpenApiOptions {
  title: string
  version: string
  description?: string
  /** Path of the authentication service, documented as login/logout (default 'authentication'). */
  authenticationPath?: string
  /** The service logins return an entity of (default 'users'). */
  entityPath?: string
}

type Operation = Record<string, unknown>

const RANGE_OPERATORS = ['$ne', '$lt', '$lte', '$gt', '$gte'] as const

/**
 * The OpenAPI 3.1 document of an app, generated from what is registered: every service's external
 * methods with their REST routes, the schemas it was registered with (records, data, patch data,
 * query fields with every query operator), pagination envelopes, multi-record create/patch/remove,
 * logging in with each strategy the authentication service accepts, Feathers' error bodies with the
 * statuses each operation answers, and bearer-token security wherever an `authenticate` hook runs.
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
      responses: errorComponents(
        Object.values(paths).flatMap((operations) =>
          Object.values(operations).flatMap((operation) => Object.keys(operation.responses ?? {}).map(Number))
        )
      ),
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
    const body = operation.requestBody ? BODY_ERRORS : []
    const errors = [
      400,
      ...body,
      ...(authenticated ? [401] : []),
      ...statuses,
      ...declaredStatuses(chain.before).filter((status) => !statuses.includes(status)),
      ...(unique ? [409] : []),
      ...SERVER_ERRORS
    ]
    Object.assign(operation.responses as Record<string, unknown>, errorResponses(errors))
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
      [404]
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
      [404]
    )
  if (has('remove'))
    i.delete = op(
      'remove',
      {
        summary: `Remove one record of ${path}`,
        parameters: [...routeParams, idParam],
        responses: { 200: { description: 'The removed record', content: json(refs.result) } }
      },
      [404]
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
      ...(callable.responses as Record<string, unknown>),
      ...errorResponses(BODY_ERRORS)
    },
    ...((post.security ?? callable.security) ? { security: post.security ?? callable.security } : {})
  }
}

/** Login (`create` with a strategy) and logout (`remove`), the Feathers v5 shapes. */
function authenticationOperations(
  service: ServiceDescription,
  user: Schema
): Record<string, Record<string, Operation>> {
  const collection = `/${routePath(service.path)}`
  const login = loginOf(service.service)
  const result = authenticationResultSchema(user, login)
  const operations: Record<string, Operation> = {}
  if (service.methods.includes('create')) {
    operations.post = {
      tags: [service.path],
      operationId: `${camel(service.path)}_create`,
      summary: `Log in: ${login.strategies.map((strategy) => strategy.name).join(', ')}`,
      description: login.strategies.map(({ name, summary }) => `- \`${name}\`: ${summary}`).join('\n'),
      requestBody: { required: true, content: json(authenticationRequestSchema(login)) },
      responses: {
        201: { description: 'Logged in', content: json(result) },
        // 401: an unknown or disallowed strategy, wrong credentials, or a dead token.
        ...errorResponses([...BODY_ERRORS, 401, ...(login.throttled ? [429] : []), ...SERVER_ERRORS])
      }
    }
  }
  if (service.methods.includes('remove')) {
    operations.delete = {
      tags: [service.path],
      operationId: `${camel(service.path)}_remove`,
      summary:
        'Log out' + (login.refreshTokens ? ': the session ends (its refresh and access tokens are revoked)' : ''),
      security: [{ bearerAuth: [] }],
      responses: {
        200: { description: 'Logged out', content: json(result) },
        ...errorResponses([401, ...SERVER_ERRORS])
      }
    }
  }
  return { [collection]: operations }
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
const camel = (path: string) => {
  const name = pascal(path)
  return name[0]!.toLowerCase() + name.slice(1)
}

function withoutKey(object: Operation, key: string): Operation {
  const { [key]: _removed, ...rest } = object
  return rest
}
