import type { JsonSchemaObject } from '../../src/domain/schema/json-schema.js'

/**
 * The result schema of the people records the store benchmarks and the typed-query tests use (id, name, age, city,
 * score, all present): what a service would declare, so stores sort and compare these typed fields simply.
 */
export const peopleSchema: JsonSchemaObject = {
  type: 'object',
  required: ['id', 'name', 'age', 'city', 'score'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    age: { type: 'integer' },
    city: { type: 'string' },
    score: { type: 'number' }
  }
}
