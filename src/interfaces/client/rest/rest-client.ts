import { errorFromJson } from '../../../domain/errors/convert-error.js'
import { FeathersError, GeneralError, Unavailable, errorForCode } from '../../../domain/errors/errors.js'
import { isStandardMethod, layoutOf } from '../../../domain/service/method-layout.js'
import type { Query, ServiceCall } from '../../../domain/service/service.js'
import type { ClientApp } from '../client-app.js'
import { fillRoute, type Transport } from '../transport.js'
import type { HttpRequest, HttpSend } from './http.js'
import {
  axiosSend,
  fetchSend,
  jquerySend,
  requestSend,
  superagentSend,
  type AxiosLike,
  type FetchLike,
  type JQueryLike,
  type RequestLike,
  type SuperagentLike
} from './http-libraries.js'
import { stringifyQuery } from './query-string.js'
import { writeOffsets } from '../transport.js'

export interface RestOptions {
  /** Sent with every request; `params.headers` of a call win over them. */
  headers?: Record<string, string>
  /** Query encoder; the default produces qs.stringify's format (see query-string.ts). */
  stringify?: (query: Query) => string
}

const VERBS: Record<string, HttpRequest['method']> = {
  find: 'GET',
  get: 'GET',
  create: 'POST',
  update: 'PUT',
  patch: 'PATCH',
  remove: 'DELETE'
}

/** The REST transport: docs/wire-protocol.md, REST, seen from the client, over any HttpSend. */
export class RestTransport implements Transport {
  readonly name = 'rest'
  private readonly base: string

  constructor(
    base: string,
    private readonly send: HttpSend,
    private readonly options: RestOptions = {}
  ) {
    this.base = base.replace(/\/+$/, '')
  }

  async call({ path, method, id, data, params }: ServiceCall): Promise<unknown> {
    const standard = isStandardMethod(method)
    const layout = layoutOf(method)
    let url = `${this.base}/${fillRoute(path, params.route, encodeURIComponent)}`
    if (layout.id && id !== undefined && id !== null) url += `/${encodeURIComponent(String(id))}`
    const query = (this.options.stringify ?? stringifyQuery)(params.query ?? {})
    if (query) url += `?${query}`
    const hasBody = layout.data
    const headers: Record<string, string> = {
      Accept: 'application/json',
      ...(hasBody ? { 'Content-Type': 'application/json' } : {}),
      ...(standard ? {} : { 'X-Service-Method': method }),
      ...this.options.headers,
      ...(params.headers as Record<string, string> | undefined)
    }
    const request: HttpRequest = { url, method: VERBS[method] ?? 'POST', headers, connection: params.connection }
    if (hasBody) request.body = data ?? {}
    let response
    try {
      response = await this.send(request)
    } catch (error) {
      throw new Unavailable(`Could not reach ${this.base}: ${error instanceof Error ? error.message : String(error)}`)
    }
    const { status, body } = response
    if (response.offset !== undefined) writeOffsets.set(params, response.offset)
    if (status < 400) return status === 204 || body === undefined ? null : body
    if (isErrorJson(body)) throw errorFromJson(body, status)
    const ErrorType = errorForCode(status) ?? GeneralError
    const error: FeathersError = new ErrorType(`${request.method} ${url} failed with status ${status}`)
    throw error
  }
}

function isErrorJson(body: unknown): body is { name: string } {
  return typeof body === 'object' && body !== null && typeof (body as { name?: unknown }).name === 'string'
}

type Plugin = (client: ClientApp) => void

/**
 * `client.configure(rest('http://localhost:3030').fetch(window.fetch))` — and likewise `.axios(axios)`,
 * `.superagent(superagent)`, `.jquery($)`, `.request(request)` (legacy: `request` is deprecated).
 */
export function rest(baseUrl = '') {
  const plugin =
    (send: HttpSend, options?: RestOptions): Plugin =>
    (client) => {
      client.transport = new RestTransport(baseUrl, send, options)
    }
  return {
    fetch: (fetch: FetchLike, options?: RestOptions) => plugin(fetchSend(fetch), options),
    axios: (axios: AxiosLike, options?: RestOptions) => plugin(axiosSend(axios), options),
    superagent: (superagent: SuperagentLike, options?: RestOptions) => plugin(superagentSend(superagent), options),
    jquery: ($: JQueryLike, options?: RestOptions) => plugin(jquerySend($), options),
    request: (request: RequestLike, options?: RestOptions) => plugin(requestSend(request), options)
  }
}
