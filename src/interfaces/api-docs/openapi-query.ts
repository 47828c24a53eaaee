import type { JsonSchema, ServiceSchemas } from '../../domain/schema/json-schema.js'
import { documented, type Schema } from './api-schemas.js'

const RANGE_OPERATORS = ['$ne', '$lt', '$lte', '$gt', '$gte'] as const

/**
 * The query parameters of find and of multi patch/remove: `$limit`, `$skip`, `$sort`, `$select`, the cursor
 * parameters, then each field of the service's query schema with every operator its store takes (any field
 * as `field[$operator]` when it declares none).
 */
export function queryParameters(schemas: ServiceSchemas, service: object): Schema[] {
  const parameters = pagingParameters()
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
  const operators = storeOperators(service)
  for (const [field, property] of Object.entries(query.properties ?? {}))
    parameters.push(...fieldParameters(field, property, operators))
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

/** What every query takes: page size and offset, cursors, the count switch, sort and select. */
function pagingParameters(): Schema[] {
  return [
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
}

/** A declared field: equality, the range operators, `$in`/`$nin`, and `$search` for strings where the store has it. */
function fieldParameters(field: string, property: JsonSchema, operators: readonly string[]): Schema[] {
  const schema = documented(property)
  const parameters: Schema[] = [{ name: field, in: 'query', description: `${field} equals`, schema }]
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
