import { isMatchAll, type Filter } from '../../domain/query/ast.js'
import { onlyKinds, type FieldShapes } from '../../domain/schema/field-shapes.js'
import { conjuncts, isIndexableScalar } from './reql-compiler.js'

/** A value an index can hold as a key. */
export type Key = string | number | boolean
interface Bound {
  value: string | number
  open: boolean
}
/** A range on one field: its kind and both ends, combined from the filter's parts that say it. */
export interface Range {
  kind: 'number' | 'string'
  lower?: Bound
  upper?: Bound
  parts: Filter[]
}

/** What the top-level criteria of a filter say about single fields: what an index read (query-plan.ts) can answer. */
export class Criteria {
  /** Equality or `$in` with strings, numbers and booleans only (the first one of each field). */
  readonly equal = new Map<string, { values: Key[]; part: Filter }>()
  /** Ranges with a number or string bound, both ends combined (the first of each side). */
  readonly ranges = new Map<string, Range>()
  readonly parts: Filter[]

  constructor(
    filter: Filter,
    private readonly shapes: FieldShapes
  ) {
    this.parts = isMatchAll(filter) ? [] : conjuncts(filter)
    for (const whole of this.parts) {
      // A part answered exactly by its simpler form is used whole when that form is.
      const part = withoutNullBranch(whole, shapes)
      if (part.op === 'eq' || part.op === 'in') {
        const values = 'values' in part ? part.values : [part.value]
        if (values.length > 0 && values.every(isIndexableScalar) && !this.equal.has(part.field)) {
          this.equal.set(part.field, {
            values: [...new Map(values.map((value) => [JSON.stringify(value), value])).values()],
            part: whole
          })
        }
      } else if (part.op === 'lt' || part.op === 'lte' || part.op === 'gt' || part.op === 'gte') {
        if (typeof part.value !== 'number' && typeof part.value !== 'string') continue
        const kind = typeof part.value as 'number' | 'string'
        const range = this.ranges.get(part.field) ?? { kind, parts: [] }
        const side = part.op === 'gt' || part.op === 'gte' ? 'lower' : 'upper'
        if (range.kind !== kind || range[side]) continue
        range[side] = { value: part.value, open: part.op === 'gt' || part.op === 'lt' }
        range.parts.push(whole)
        this.ranges.set(part.field, range)
      }
    }
  }

  /** The value the filter fixes the field to, when it fixes exactly one. */
  single(field: string): Key | undefined {
    const equal = this.equal.get(field)
    return equal?.values.length === 1 ? equal.values[0] : undefined
  }

  /** Whether every matching record is in an index on this field (present, not null, not an object). */
  indexed(field: string): boolean {
    const shape = this.shapes(field)
    return (
      this.equal.has(field) ||
      this.ranges.has(field) ||
      (shape?.required === true && onlyKinds(shape, 'number', 'string', 'boolean', 'array'))
    )
  }

  /**
   * Whether an index orders this field's matching values as the memory adapter does (numbers, strings, present);
   * `declared`: known from the schema alone.
   */
  ordered(field: string, declared = false): boolean {
    const shape = this.shapes(field)
    const equal = this.equal.get(field)
    if (equal && !declared) return equal.values.every((value) => typeof value !== 'boolean')
    return (!declared && this.ranges.has(field)) || (shape?.required === true && onlyKinds(shape, 'number', 'string'))
  }

  /** The criteria left once `used` are answered by the way into the table. */
  without(used: readonly Filter[]): Filter {
    const rest = this.parts.filter((part) => !used.includes(part))
    return rest.length === 1 ? rest[0]! : { op: 'and', filters: rest }
  }
}

/**
 * `field <op> value or field null` as just `field <op> value` when the schema says the field is
 * present and never null in every record (the null branch matches nothing): so a descending
 * cursor's bound ("at most the value, or null") becomes a range an index reads.
 */
function withoutNullBranch(part: Filter, shapes: FieldShapes): Filter {
  if (part.op !== 'or' || part.filters.length !== 2) return part
  const [test, nullTest] = part.filters as [Filter, Filter]
  if (nullTest.op !== 'eq' || nullTest.value !== null || !('field' in test) || test.field !== nullTest.field)
    return part
  const shape = shapes(test.field)
  return shape?.required === true && !shape.kinds.has('null') ? test : part
}
