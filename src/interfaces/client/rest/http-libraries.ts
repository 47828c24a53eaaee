import { parseBody, type HttpRequest, type HttpResponse, type HttpSend } from './http.js'

/*
 * One HttpSend per supported HTTP library. The libraries are passed in by the user, so the
 * client imports none of them; the types below are the small structural parts we call.
 */

export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string }
) => Promise<{ status: number; text(): Promise<string>; headers?: { get(name: string): string | null } }>

/** Read your writes: the event offset of a write that asked for it (the `Plumage-Offset` header), if any. */
const OFFSET = 'plumage-offset'

/** The answer, with the offset when the header carried one (a string: every library hands headers as text). */
function answer(status: number, body: unknown, offset: unknown): HttpResponse {
  return typeof offset === 'string' && offset !== '' ? { status, body, offset } : { status, body }
}

export function fetchSend(fetch: FetchLike): HttpSend {
  return async ({ url, method, headers, body, connection }) => {
    const response = await fetch(url, { method, headers, body: json(body), ...connection })
    return answer(response.status, parseBody(await response.text()), response.headers?.get(OFFSET))
  }
}

/** Node's and the libraries' header objects: lower-case names (axios' AxiosHeaders reads the same way). */
type HeaderRecord = Record<string, unknown>

export interface AxiosLike {
  request(config: Record<string, unknown>): Promise<{ status: number; data: unknown; headers?: HeaderRecord }>
}

export function axiosSend(axios: AxiosLike): HttpSend {
  return async ({ url, method, headers, body, connection }) => {
    // Every status resolves and the body stays text: one parsing and error path for all libraries.
    const response = await axios.request({
      url,
      method,
      headers,
      data: json(body),
      validateStatus: () => true,
      responseType: 'text',
      transformResponse: [(data: unknown) => data],
      ...connection
    })
    return answer(response.status, parseBody(response.data), response.headers?.[OFFSET])
  }
}

interface SuperagentRequest extends PromiseLike<{
  status: number
  text?: string
  body?: unknown
  header?: HeaderRecord
}> {
  set(headers: Record<string, string>): SuperagentRequest
  send(body: string): SuperagentRequest
  ok(check: () => boolean): SuperagentRequest
}
export type SuperagentLike = (method: string, url: string) => SuperagentRequest

export function superagentSend(superagent: SuperagentLike): HttpSend {
  return async ({ url, method, headers, body }) => {
    let request = superagent(method, url)
      .set(headers)
      .ok(() => true)
    if (body !== undefined) request = request.send(json(body)!)
    const response = await request
    const text = typeof response.text === 'string' ? parseBody(response.text) : response.body
    return answer(response.status, text, response.header?.[OFFSET])
  }
}

interface JqXhr {
  status: number
  statusText: string
  responseText?: string
  getResponseHeader?(name: string): string | null
}
export interface JQueryLike {
  ajax(settings: Record<string, unknown>): {
    then(done: (data: unknown, status: string, xhr: JqXhr) => void, fail: (xhr: JqXhr) => void): unknown
  }
}

export function jquerySend($: JQueryLike): HttpSend {
  return ({ url, method, headers, body, connection }) =>
    new Promise((resolve, reject) => {
      // dataType 'text': jQuery would otherwise reject empty 204 bodies and non-JSON error pages.
      $.ajax({
        url,
        type: method,
        headers,
        data: json(body),
        dataType: 'text',
        processData: false,
        contentType: false,
        ...connection
      }).then(
        (_data, _status, xhr) => resolve(jqueryAnswer(xhr)),
        (xhr) => (xhr.status === 0 ? reject(new Error(xhr.statusText || 'network error')) : resolve(jqueryAnswer(xhr)))
      )
    })
}

function jqueryAnswer(xhr: JqXhr): HttpResponse {
  return answer(xhr.status, parseBody(xhr.responseText), xhr.getResponseHeader?.(OFFSET))
}

/**
 * The shape of the `request` package's function (or its `defaults(...)`); typed loosely enough that the real one fits.
 */
export type RequestLike = (
  options: { url: string; method: string; headers: Record<string, string>; body?: string },
  callback: (error: unknown, response: { statusCode: number; headers?: HeaderRecord }, body: unknown) => void
) => unknown

/** `request` is deprecated upstream: legacy support. Its `defaults` (e.g. basic auth) are kept. */
export function requestSend(request: RequestLike): HttpSend {
  return ({ url, method, headers, body, connection }: HttpRequest) =>
    new Promise((resolve, reject) => {
      request({ url, method, headers, body: json(body), ...connection }, (error, response, text) => {
        if (error) reject(error)
        else resolve(answer(response.statusCode, parseBody(text), response.headers?.[OFFSET]))
      })
    })
}

function json(body: unknown): string | undefined {
  return body === undefined ? undefined : JSON.stringify(body)
}
