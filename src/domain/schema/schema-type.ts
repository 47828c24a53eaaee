/**
 * The TypeScript type a JSON Schema declared `as const` describes: the server's record types
 * (`type Message = SchemaType<typeof messageSchema>`) and the typed client's data, query and results
 * (src/interfaces/client/schema-types.ts) come from this one conversion, so the two cannot disagree.
 *
 * It reads the keywords plumage's schemas use (JsonSchemaObject) and nothing else, a few conditional types
 * per schema, because a client of many services converts every schema of every service: a general
 * converter (json-schema-to-ts's FromSchema) made that the compiler's main cost (BENCHMARKS.md "Typed client").
 *
 * - `type`, one or several: `string`, `number` / `integer` → number, `boolean`, `null`, `array` (of its
 *   `items`, else unknown[]), `object`; `nullable: true` adds null; an `enum` beside it gives its values;
 * - without `type`: `const` or `enum` gives the literal values; `anyOf` / `oneOf` the union of the
 *   branches, each converted alone (a parent's other keywords are not merged into them); `properties`
 *   an object;
 * - objects: `properties`, optional unless `required`; a property declared `false` is `?: never` (a
 *   server-owned field a client may not send); `additionalProperties: false` closes the object, a schema
 *   types the other fields, and `true` or nothing leaves them `unknown`. The type is an intersection
 *   (required & optional & other fields), not one flattened object: flattening doubled the cost;
 * - a schema `true` (or without these keywords) is `unknown`, `false` is `never`.
 *
 * Validation keywords (`format`, `minLength`, `pattern`, `transform`, …) narrow values, not types: ignored.
 */
export type SchemaType<Schema> = Schema extends { type: infer Type }
  ? Schema extends { enum: readonly (infer Value)[] }
    ? Value
    : Schema extends { nullable: true }
      ? Named<Type extends readonly (infer One)[] ? One : Type, Schema> | null
      : Named<Type extends readonly (infer One)[] ? One : Type, Schema>
  : Untyped<Schema>

/** A schema without `type`: a boolean schema, `const`, `enum`, a union of branches, or an object by its properties. */
type Untyped<Schema> = Schema extends false
  ? never
  : Schema extends { const: infer Value }
    ? Value
    : Schema extends { enum: readonly (infer Value)[] }
      ? Value
      : Schema extends { anyOf: readonly (infer Branch)[] }
        ? SchemaType<Branch>
        : Schema extends { oneOf: readonly (infer Branch)[] }
          ? SchemaType<Branch>
          : Schema extends { properties: object }
            ? ObjectType<Schema>
            : unknown

interface Primitives {
  string: string
  number: number
  integer: number
  boolean: boolean
  null: null
}

/** One `type` name's TypeScript type; distributes over a union of names (`type: ['integer', 'string']`). */
type Named<Type, Schema> = Type extends keyof Primitives
  ? Primitives[Type]
  : Type extends 'array'
    ? Schema extends { items: infer Items }
      ? SchemaType<Items>[]
      : unknown[]
    : ObjectType<Schema>

type RequiredOf<Schema> = Schema extends { required: readonly (infer Name)[] } ? Name : never

/** Other fields than the declared ones: none, of one schema's type, or anything. */
type Additional<Schema> = Schema extends { additionalProperties: false }
  ? unknown
  : Schema extends { additionalProperties: infer Other }
    ? { [field: string]: SchemaType<Other> }
    : { [field: string]: unknown }

/**
 * Required and optional properties over the key unions (not mapped with `as` clauses, which cost twice as
 * many instantiations), then the other fields.
 */
type ObjectType<Schema> = Schema extends { properties: infer Properties }
  ? { -readonly [K in Extract<keyof Properties, RequiredOf<Schema>>]: SchemaType<Properties[K]> } & {
      -readonly [K in Exclude<keyof Properties, RequiredOf<Schema>>]?: SchemaType<Properties[K]>
    } & Additional<Schema>
  : Schema extends { additionalProperties: false }
    ? Record<string, never>
    : Additional<Schema>
