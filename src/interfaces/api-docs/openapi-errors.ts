import { errorsByName } from '../../domain/errors/errors.js'
import type { Schema } from './api-schemas.js'

/*
 * The error side of the OpenAPI document (openapi-document.ts): the statuses an operation may answer, each a
 * reusable response whose body is the Feathers error with its name, code and class fixed.
 */

/**
 * Every error status an operation may answer, as a reusable response (`#/components/responses/<name>`) whose body
 * is the Feathers error with its `name`, `code` and `className` fixed: what a client switches on.
 */
const ERRORS: Record<number, { name: string; className: string; description: string }> = {
  400: {
    name: 'BadRequest',
    className: 'bad-request',
    description: 'Invalid data, query or JSON: every failing field is listed in `errors` (field → message) and `data`'
  },
  401: {
    name: 'NotAuthenticated',
    className: 'not-authenticated',
    description: 'Not authenticated: a missing, invalid, expired or revoked access token'
  },
  403: { name: 'Forbidden', className: 'forbidden', description: 'Forbidden: not allowed to act on this record' },
  404: { name: 'NotFound', className: 'not-found', description: 'No record with this id' },
  405: {
    name: 'MethodNotAllowed',
    className: 'method-not-allowed',
    description: 'The method, or acting on several records, is not allowed here'
  },
  409: {
    name: 'Conflict',
    className: 'conflict',
    description: 'Conflict: a unique value is already taken (`errors` names the field)'
  },
  413: { name: 'PayloadTooLarge', className: 'payload-too-large', description: 'The body is too large' },
  429: {
    name: 'TooManyRequests',
    className: 'too-many-requests',
    description: 'Too many failed logins for this account or address: retry after `Retry-After` seconds'
  },
  500: {
    name: 'GeneralError',
    className: 'general-error',
    description: 'An unexpected server error (its message says nothing more; the server logs the cause)'
  },
  503: { name: 'Unavailable', className: 'unavailable', description: 'The database is unreachable: retry later' }
}
/** Every operation may meet a failing server or an unreachable database. */
export const SERVER_ERRORS = [500, 503]
/** Operations with a body: malformed JSON is a 400, an oversized one a 413. */
export const BODY_ERRORS = [400, 413]

/**
 * A status's name, class and description: the table above, or for a status only a hook declares
 * (declareStatuses) the Feathers error with that code.
 */
function errorInfo(status: number): { name: string; className: string; description: string } {
  const known = ERRORS[status]
  if (known) return known
  const error = Object.values(errorsByName)
    .map((Class) => new Class())
    .find((candidate) => candidate.code === status)
  const name = error?.name ?? `Error${status}`
  return { name, className: error?.className ?? 'error', description: `${name}, declared by a hook` }
}

const errorRef = (status: number) => ({ $ref: `#/components/responses/${errorInfo(status).name}` })
export function errorResponses(statuses: number[]): Record<string, unknown> {
  const sorted = [...new Set(statuses)].sort((a, b) => a - b)
  return Object.fromEntries(sorted.map((status) => [status, errorRef(status)]))
}

/** The reusable error responses: the Error schema with each status's name, code and class. */
export function errorComponents(used: number[]): Record<string, Schema> {
  const errors = used.filter((status) => status >= 400)
  const statuses = [...new Set([...Object.keys(ERRORS).map(Number), ...errors])].sort((a, b) => a - b)
  return Object.fromEntries(
    statuses
      .map((status) => [status, errorInfo(status)] as const)
      .map(([status, { name, className, description }]) => [
        name,
        {
          description,
          ...(status === 429
            ? { headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } } }
            : {}),
          content: json({
            allOf: [
              { $ref: '#/components/schemas/Error' },
              {
                type: 'object',
                properties: { name: { const: name }, code: { const: Number(status) }, className: { const: className } }
              }
            ]
          })
        }
      ])
  )
}

const json = (schema: unknown) => ({ 'application/json': { schema } })
