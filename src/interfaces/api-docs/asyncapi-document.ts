import type { App, ServiceDescription } from '../../application/transport/index.js'
import { layoutOf, STANDARD_EVENTS } from '../../domain/service/method-layout.js'
import {
  authenticationRequestSchema,
  authenticationResultSchema,
  cursorPageSchema,
  errorSchema,
  loginOf,
  pascal,
  schemaRefs,
  type Schema,
  type SchemaRefs
} from './api-schemas.js'
import type { OpenApiOptions } from './openapi-document.js'

/*
 * The AsyncAPI 3.0 document of an app: what the real-time transport (socket.io) carries, generated from
 * what is registered, as openapi-document.ts does for REST and with the same schemas. One channel per
 * service (its address is the service path every call frame names); in it, the calls a client sends
 * (`emit(method, path, ...args, ack)`, answered through the ack) and the `<path> <event>` events the server
 * sends. The authentication channel also has the older `authenticate` and `logout` events.
 */

const ERROR_REF = { $ref: '#/components/schemas/Error' }
const QUERY = {
  type: 'object',
  description:
    'The query, as JSON (its types survive, unlike a query string): fields, operators, $limit, $sort…; ' +
    "for cursor pages $after (a page's next), $before (its prev) and $count: false (no total)",
  additionalProperties: true
}
const ID = { type: ['integer', 'string'], description: 'The record id' }
const EVENT_OF: Record<string, string> = { created: 'create', updated: 'update', patched: 'patch', removed: 'remove' }

const CONNECTING = `Connect with a socket.io client (v4, path \`/socket.io/\`) to the server that serves this document.
Every call is \`socket.emit(method, path, ...arguments, ack)\`; the server answers through the ack,
with \`(null, result)\` or \`(error)\` in Feathers' error shape. Send the access token either in the handshake
(\`auth: { accessToken }\` or an \`Authorization\` header) or by calling \`create\` on the authentication service.`

const CHANNELS = `Events reach a connection only when the app's channel rules publish them to a channel it joined
(\`app.publish\` / \`service.publish\`, e.g. the reference app publishes to authenticated connections):
the socket.io channels below are services, and which connections hear a service's events is decided per event by
those rules, not by subscribing. A connection that resumes within the recovery window receives what it missed
(events then carry their offset as a second argument).`

/** The AsyncAPI 3.0 document of `app`'s socket protocol; `options` as for OpenAPI (title, version, paths). */
export function asyncApiDocument(app: App, options: OpenApiOptions): Schema {
  const authPath = options.authenticationPath ?? 'authentication'
  const schemas: Record<string, Schema> = { Error: errorSchema() }
  const channels: Record<string, Schema> = {}
  const operations: Record<string, Schema> = {}
  const results = new Map<string, Schema>()
  const services = app.describe()
  // The authentication service last: its answer embeds the entity service's record schema.
  for (const service of [
    ...services.filter((s) => s.path !== authPath),
    ...services.filter((s) => s.path === authPath)
  ]) {
    const refs =
      service.path === authPath
        ? authenticationRefs(service, results.get(options.entityPath ?? 'users') ?? { type: 'object' })
        : schemaRefs(service, schemas)
    results.set(service.path, refs.result)
    const key = keyOf(service.path)
    const channel = serviceChannel(service, key, refs, service.path === authPath)
    channels[key] = channel.channel
    Object.assign(operations, channel.operations)
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: `${options.title} real-time API`,
      version: options.version,
      description: [options.description, CONNECTING, CHANNELS].filter(Boolean).join('\n\n')
    },
    defaultContentType: 'application/json',
    channels,
    operations,
    components: { schemas }
  }
}

function authenticationRefs(service: ServiceDescription, user: Schema): SchemaRefs {
  const login = loginOf(service.service)
  const request = authenticationRequestSchema(login)
  return { result: authenticationResultSchema(user, login), data: request, patch: request }
}

/** One service's channel: a call message and its reply per method, a message per event, and their operations. */
function serviceChannel(
  service: ServiceDescription,
  key: string,
  refs: SchemaRefs,
  authentication: boolean
): { channel: Schema; operations: Record<string, Schema> } {
  const { path } = service
  const messages: Record<string, Schema> = {
    error: {
      name: 'error',
      title: 'Error answer',
      summary: "The ack's arguments when a call fails: `(error)`",
      payload: tuple([ERROR_REF])
    }
  }
  const operations: Record<string, Schema> = {}
  const call = caller(path, key, messages, operations)
  const pathArg = { const: path, description: 'The service path' }
  for (const method of service.methods) {
    const layout = layoutOf(method)
    const data = method === 'patch' ? refs.patch : refs.data
    // patch and remove take id null for every match of the query (where the service allows several).
    const id = method === 'patch' || method === 'remove' ? { ...ID, type: [...ID.type, 'null'] } : ID
    const args = [pathArg, ...(layout.id ? [id] : []), ...(layout.data ? [data] : []), QUERY]
    call(method, args, 1, callSummary(method, path, authentication), callResult(method, refs, authentication))
  }
  if (authentication) {
    call('authenticate', [refs.data], 0, 'Log in on this connection (the older form of create)', refs.result)
    call('logout', [], 0, 'Log out this connection (the older form of remove)', refs.result)
  }
  for (const event of service.events) addEvent(path, key, event, refs, messages, operations)
  const parameters = Object.fromEntries(
    [...path.matchAll(/:(\w+)/g)].map((match) => [match[1], { description: `The route value \`${match[1]}\`` }])
  )
  return {
    channel: {
      address: path.replace(/:(\w+)/g, '{$1}'),
      title: path,
      description: authentication
        ? 'Logging in and out on this connection; a login joins the channels the app picks for authenticated users.'
        : `The service \`${path}\`: its calls, and its events as the app's channel rules deliver them.`,
      ...(Object.keys(parameters).length > 0 ? { parameters } : {}),
      messages
    },
    operations
  }
}

const channelRef = (key: string) => ({ $ref: `#/channels/${key}` })
const messageRef = (key: string, name: string) => ({ $ref: `#/channels/${key}/messages/${name}` })

/** Adds a call to a channel: the message a client sends, its reply, and the `send` operation answered by either. */
function caller(path: string, key: string, messages: Record<string, Schema>, operations: Record<string, Schema>) {
  return (event: string, args: Schema[], optionalArgs: number, summary: string, reply: Schema): void => {
    const name = messageKey(event)
    messages[`${name}Call`] = {
      name: event,
      title: `${event} ${path}`,
      summary,
      payload: tuple(args, args.length - optionalArgs)
    }
    messages[`${name}Reply`] = {
      name: `${event} answer`,
      title: `${event} ${path}: answer`,
      summary: "The ack's arguments when the call succeeds: `(null, result)`",
      payload: tuple([{ type: 'null' }, reply])
    }
    operations[`${key}_${name}`] = {
      action: 'send',
      channel: channelRef(key),
      title: `${event} ${path}`,
      summary,
      messages: [messageRef(key, `${name}Call`)],
      reply: { channel: channelRef(key), messages: [messageRef(key, `${name}Reply`), messageRef(key, 'error')] }
    }
  }
}

/** Adds a service event to a channel: its message and the `receive` operation. */
function addEvent(
  path: string,
  key: string,
  event: string,
  refs: SchemaRefs,
  messages: Record<string, Schema>,
  operations: Record<string, Schema>
): void {
  const name = `${messageKey(event)}Event`
  const standard = STANDARD_EVENTS.includes(event)
  messages[name] = {
    name: `${path} ${event}`,
    title: `${path} ${event}`,
    summary: standard
      ? `A record was ${event} (by \`${EVENT_OF[event]}\`), as its callers received it`
      : `The custom event \`${event}\`, with the data the service sent`,
    payload: standard ? refs.result : {}
  }
  operations[`${key}_on_${messageKey(event)}`] = {
    action: 'receive',
    channel: channelRef(key),
    title: `${path} ${event}`,
    summary: `socket.on('${path} ${event}', listener): sent to the connections the channel rules pick`,
    messages: [messageRef(key, name)]
  }
}

function callSummary(method: string, path: string, authentication: boolean): string {
  if (authentication)
    return method === 'create' ? 'Log in: local (email + password) or jwt' : `${method} on ${path} (remove: log out)`
  const summaries: Record<string, string> = {
    find: `Find records of ${path} (a page when the service paginates)`,
    get: `Get one record of ${path}`,
    create: `Create a record (or several, where multi allows it) in ${path}`,
    update: `Replace one record of ${path}`,
    patch: `Patch one record of ${path}, or every match of the query with id null`,
    remove: `Remove one record of ${path}, or every match of the query with id null`
  }
  return summaries[method] ?? `The custom method \`${method}\` of ${path}`
}

function callResult(method: string, refs: SchemaRefs, authentication: boolean): Schema {
  if (authentication) return refs.result
  if (method === 'find')
    return {
      oneOf: [
        { type: 'array', items: refs.result },
        {
          anyOf: [
            {
              type: 'object',
              description: 'A page',
              required: ['data'],
              properties: {
                total: { type: 'integer' },
                limit: { type: 'integer' },
                skip: { type: 'integer' },
                data: { type: 'array', items: refs.result }
              }
            },
            cursorPageSchema(refs.result, false)
          ]
        }
      ]
    }
  if (['create', 'patch', 'remove'].includes(method))
    return { oneOf: [refs.result, { type: 'array', items: refs.result }] }
  // get and update answer the record; a custom method whatever it returns.
  return method === 'get' || method === 'update' ? refs.result : {}
}

/** The arguments of a frame, in order, as a JSON array; `minItems` counts those that must be sent. */
function tuple(items: Schema[], minItems = items.length): Schema {
  // AsyncAPI's schema of schemas wants at least one item in an `items` list: no arguments is just an empty array.
  if (items.length === 0) return { type: 'array', maxItems: 0 }
  return { type: 'array', items, minItems, maxItems: items.length }
}

/** A name usable as a key of channels, operations and messages (letters, digits, `_` and `-`). */
const messageKey = (name: string) => name.replace(/[^A-Za-z0-9_-]/g, '_')
const keyOf = (path: string) => {
  const name = pascal(path) || 'root'
  return name[0]!.toLowerCase() + name.slice(1)
}
