import type { App, ServiceDescription } from '../../application/transport/index.js'
import {
  authenticationRequestSchema,
  authenticationResultSchema,
  errorSchema,
  loginOf,
  type Schema
} from './api-schemas.js'
import { BODY_ERRORS, SERVER_ERRORS, errorComponents, errorResponses } from './openapi-errors.js'
import { camel, json, routePath, serviceOperations, type Operation, type Routes } from './openapi-operations.js'

export interface OpenApiOptions {
  title: string
  version: string
  description?: string
  /** Path of the authentication service, documented as login/logout (default 'authentication'). */
  authenticationPath?: string
  /** The service logins return an entity of (default 'users'). */
  entityPath?: string
}

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
  const paths: Routes = {}
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

/** Login (`create` with a strategy) and logout (`remove`), the Feathers v5 shapes. */
function authenticationOperations(service: ServiceDescription, user: Schema): Routes {
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
