/** The request a REST transport hands to an HTTP library adapter. */
export interface HttpRequest {
  url: string
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  headers: Record<string, string>
  /** A JSON value, serialised by the adapter; absent for GET and DELETE. */
  body?: unknown
  /** `params.connection`: extra options for the HTTP library (e.g. an agent), as in Feathers. */
  connection?: Record<string, unknown>
}

export interface HttpResponse {
  status: number
  /** The parsed JSON body; the raw text when it was not JSON; undefined when empty. */
  body: unknown
  /** The `Plumage-Offset` header of a write's answer (read your writes), when the server sent one. */
  offset?: string
}

/**
 * Sends one request with a particular HTTP library. Resolves for every HTTP status (the transport
 * turns 4xx/5xx into errors); rejects only when no response arrived (connection refused, DNS, …).
 */
export type HttpSend = (request: HttpRequest) => Promise<HttpResponse>

export function parseBody(text: unknown): unknown {
  if (typeof text !== 'string') return text
  if (text.length === 0) return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    return text
  }
}
