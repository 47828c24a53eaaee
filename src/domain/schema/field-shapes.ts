import type { JsonSchema, JsonSchemaObject } from './json-schema.js'

/** The JSON kinds a stored value can have (`integer` counts as number). */
export type Kind = 'number' | 'string' | 'boolean' | 'null' | 'array' | 'object'

/** What is known about a field of every stored record. */
export interface FieldShape {
  /** The kinds its value can have when present. */
  kinds: ReadonlySet<Kind>
  /** Present in every record (it may still be null when `kinds` has 'null'). */
  required: boolean
}

/** The shape of a (dotted) field, or undefined when nothing is known about it. */
export type FieldShapes = (field: string) => FieldShape | undefined

/** Nothing known about any field: every query keeps all its type guards. */
export const UNKNOWN_SHAPES: FieldShapes = () => undefined

/**
 * Reads field shapes from the schema of the stored records (e.g. a service's `result` schema), from
 * `type`, `enum` and `const`, and `required` along the path. The store relies on it as a promise:
 * a record that breaks it (written around the service) may be matched or sorted differently than
 * the memory adapter would.
 */
export function shapesFromSchema(schema: JsonSchemaObject | undefined, idField?: string): FieldShapes {
  if (!schema) return UNKNOWN_SHAPES
  // Only fields the schema declares are kept: queries name any field a client sends, so caching the unknown
  // ones would let clients grow the map without bound (an unknown field costs one walk of the path).
  const known = new Map<string, FieldShape>()
  return (field) => {
    const cached = known.get(field)
    if (cached) return cached
    const shape = shapeAt(schema, field.split('.'))
    if (!shape) return undefined
    // The primary key is in every record, whatever the schema says about presence.
    const kept = field === idField ? { ...shape, required: true } : shape
    known.set(field, kept)
    return kept
  }
}

function shapeAt(root: JsonSchemaObject, path: string[]): FieldShape | undefined {
  let parent = root
  let required = true
  let shape: FieldShape | undefined
  for (const [index, key] of path.entries()) {
    const property = parent.properties && Object.hasOwn(parent.properties, key) ? parent.properties[key] : undefined
    const kinds = kindsOf(property)
    if (!kinds) return undefined
    required &&= parent.required?.includes(key) ?? false
    shape = { kinds, required }
    if (index === path.length - 1) break
    // Only a path through objects reaches a nested field; a parent that may be null or missing makes it optional.
    if (!isSchemaObject(property) || [...kinds].some((kind) => kind !== 'object' && kind !== 'null')) return undefined
    required &&= !kinds.has('null')
    parent = property
  }
  return shape
}

function kindsOf(schema: JsonSchema | undefined): Set<Kind> | undefined {
  if (!isSchemaObject(schema)) return undefined
  if (schema.type !== undefined) {
    const types = typeof schema.type === 'string' ? [schema.type] : [...schema.type]
    return new Set(types.map((type) => (type === 'integer' ? 'number' : type)))
  }
  const values = schema.enum ?? (Object.hasOwn(schema, 'const') ? [schema.const] : undefined)
  return values && values.length > 0 ? new Set(values.map(kindOfValue)) : undefined
}

function kindOfValue(value: unknown): Kind {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  const type = typeof value
  return type === 'number' || type === 'string' || type === 'boolean' ? type : 'object'
}

function isSchemaObject(schema: JsonSchema | undefined): schema is JsonSchemaObject {
  return typeof schema === 'object' && schema !== null
}

/** Whether every present value of the field is one of `kinds` (false when nothing is known). */
export function onlyKinds(shape: FieldShape | undefined, ...kinds: Kind[]): boolean {
  return shape !== undefined && [...shape.kinds].every((kind) => kinds.includes(kind))
}
