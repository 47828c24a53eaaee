import {
  AUTHENTICATES,
  UNIQUE_FIELD,
  declaredStatuses,
  type ServiceDescription
} from '../../application/transport/index.js'
import { isStandardMethod } from '../../domain/service/method-layout.js'
import type { PaginationOptions } from '../../domain/service/service.js'
import { cursorPageSchema, pascal, schemaRefs, type Schema, type SchemaRefs } from './api-schemas.js'
import { BODY_ERRORS, SERVER_ERRORS, errorResponses } from './openapi-errors.js'
import { queryParameters } from './openapi-query.js'

export type Operation = Record<string, unknown>
export type Routes = Record<string, Record<string, Operation>>

/** What the operations of one service are built from. */
interface ServiceParts {
  path: string
  refs: SchemaRefs
  has(method: string): boolean
  multi(method: string): boolean
  /** Completes an operation: its tag, id, error responses (with `statuses`) and security. */
  op(method: string, operation: Operation, statuses: number[]): Operation
  routeParams: Schema[]
  query: Schema[]
  paginate: false | PaginationOptions | undefined
}

/**
 * A service's REST routes: find, create and the multi patch/remove on the collection, get, update, patch and
 * remove on `/{id}`, custom methods on the collection's POST. `results` collects each service's record schema.
 */
export function serviceOperations(
  service: ServiceDescription,
  components: Record<string, Schema>,
  results: Map<string, Schema>
): Routes {
  const { path, schemas = {} } = service
  const options =
    (service.service as { options?: { paginate?: false | PaginationOptions; multi?: boolean | string[] } }).options ??
    {}
  const refs = schemaRefs(service, components)
  results.set(path, refs.result)
  const parts: ServiceParts = {
    path,
    refs,
    has: (method) => service.methods.includes(method),
    multi: (method) => options.multi === true || (Array.isArray(options.multi) && options.multi.includes(method)),
    op: operationOf(service),
    routeParams: [...path.matchAll(/:(\w+)/g)].map((match) => ({
      name: match[1],
      in: 'path',
      required: true,
      schema: { type: 'string' }
    })),
    query: queryParameters(schemas, service.service),
    paginate: options.paginate
  }
  const collection = `/${routePath(path)}`
  const routes: Routes = { [collection]: collectionOperations(parts), [`${collection}/{id}`]: itemOperations(parts) }
  const custom = service.methods.filter((method) => !isStandardMethod(method))
  if (custom.length > 0) {
    const c = routes[collection]!
    const summary = `Call ${custom.map((method) => `\`${method}\``).join(', ')} on ${path}`
    const callable = parts.op(custom[0]!, { summary, parameters: parts.routeParams, responses: {} }, [405])
    c.post = withCustomMethods(c.post, custom, { ...callable, operationId: `${camel(path)}_custom` })
  }
  for (const route of Object.keys(routes)) if (Object.keys(routes[route]!).length === 0) delete routes[route]
  return routes
}

/** The operation completer of one service: what every operation of it shares. */
function operationOf(service: ServiceDescription): ServiceParts['op'] {
  return (method, operation, statuses) => {
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
    const { operationIdSuffix, ...rest } = operation
    return {
      tags: [service.path],
      operationId: `${camel(service.path)}_${method}${(operationIdSuffix as string | undefined) ?? ''}`,
      ...rest,
      ...(authenticated ? { security: [{ bearerAuth: [] }] } : {})
    }
  }
}

/** What find answers: a page (with or without a total) when the service paginates, else an array. */
function pageSchema(paginate: ServiceParts['paginate'], result: Schema): Schema {
  if (!paginate) return { type: 'array', items: result }
  // A page has a limit when a size bounds it: the service's default or max, or the query's $limit.
  const sized = paginate.default !== undefined || paginate.max !== undefined
  return {
    anyOf: [
      {
        type: 'object',
        description: 'A page (Feathers)',
        required: sized ? ['total', 'limit', 'skip', 'data'] : ['total', 'skip', 'data'],
        properties: {
          total: { type: 'integer' },
          limit: { type: 'integer' },
          skip: { type: 'integer' },
          data: { type: 'array', items: result }
        }
      },
      cursorPageSchema(result, sized)
    ]
  }
}

/** find, create, and patch and remove of every match where the service allows several. */
function collectionOperations({ path, refs, has, multi, op, routeParams, query, paginate }: ServiceParts) {
  const operations: Record<string, Operation> = {}
  const many = { type: 'array', items: refs.result }
  if (has('find')) {
    const description = paginate ? 'A page of records' : 'The matching records'
    const responses = { 200: { description, content: json(pageSchema(paginate, refs.result)) } }
    operations.get = op('find', { summary: `Find ${path}`, parameters: [...routeParams, ...query], responses }, [])
  }
  if (has('create')) {
    const several = multi('create')
    operations.post = op(
      'create',
      {
        summary: `Create ${several ? 'one or several records' : 'a record'} in ${path}`,
        parameters: routeParams,
        requestBody: {
          required: true,
          content: json(several ? { oneOf: [refs.data, { type: 'array', items: refs.data }] } : refs.data)
        },
        responses: {
          201: { description: 'Created', content: json(several ? { oneOf: [refs.result, many] } : refs.result) }
        }
      },
      several ? [] : [405]
    )
  }
  if (has('patch') && multi('patch'))
    operations.patch = op(
      'patch',
      {
        operationIdSuffix: 'Many',
        summary: `Patch every record of ${path} that matches the query`,
        parameters: [...routeParams, ...query],
        requestBody: { required: true, content: json(refs.patch) },
        responses: { 200: { description: 'The patched records', content: json(many) } }
      },
      []
    )
  if (has('remove') && multi('remove'))
    operations.delete = op(
      'remove',
      {
        operationIdSuffix: 'Many',
        summary: `Remove every record of ${path} that matches the query`,
        parameters: [...routeParams, ...query],
        responses: { 200: { description: 'The removed records', content: json(many) } }
      },
      []
    )
  return operations
}

const ID_PARAM = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'The record id',
  schema: { type: ['integer', 'string'] }
}

/** get, update, patch and remove of one record. */
function itemOperations({ path, refs, has, op, routeParams }: ServiceParts) {
  const operations: Record<string, Operation> = {}
  const parameters = [...routeParams, ID_PARAM]
  const one = (description: string) => ({ 200: { description, content: json(refs.result) } })
  if (has('get'))
    operations.get = op(
      'get',
      { summary: `Get one record of ${path}`, parameters, responses: one('The record') },
      [404]
    )
  if (has('update'))
    operations.put = op(
      'update',
      {
        summary: `Replace one record of ${path}`,
        parameters,
        requestBody: { required: true, content: json(refs.data) },
        responses: one('The replaced record')
      },
      [404]
    )
  if (has('patch'))
    operations.patch = op(
      'patch',
      {
        summary: `Patch one record of ${path}`,
        parameters,
        requestBody: { required: true, content: json(refs.patch) },
        responses: one('The patched record')
      },
      [404]
    )
  if (has('remove'))
    operations.delete = op(
      'remove',
      { summary: `Remove one record of ${path}`, parameters, responses: one('The removed record') },
      [404]
    )
  return operations
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

export const json = (schema: unknown) => ({ 'application/json': { schema } })
export const routePath = (path: string) => path.replace(/:(\w+)/g, '{$1}')
export const camel = (path: string) => {
  const name = pascal(path)
  return name[0]!.toLowerCase() + name.slice(1)
}
