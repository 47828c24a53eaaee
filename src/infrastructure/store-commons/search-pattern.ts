import { createRequire } from 'node:module'
import type { RE2JS } from 're2js'
import { BadRequest } from '../../domain/errors/errors.js'
import type { PatternCompiler } from '../../domain/query/pattern-compiler.js'

/** re2js is half a megabyte of code that most apps never run: it loads at the first `$search`, not at startup. */
let re2: typeof RE2JS | undefined
const loadRe2 = () => (re2 ??= (createRequire(import.meta.url)('re2js') as { RE2JS: typeof RE2JS }).RE2JS)

/**
 * `$search` with RE2 semantics (the syntax RethinkDB uses), linear time whatever the pattern: the pattern
 * engine the memory store gives the domain's evaluator, and the PostgreSQL store too, for the rows the rest
 * of a filter selected.
 */
export const compilePattern: PatternCompiler = (pattern) => {
  let regex: RE2JS
  try {
    regex = loadRe2().compile(pattern)
  } catch (error) {
    throw new BadRequest(`Invalid $search pattern: ${(error as Error).message}`)
  }
  return (text) => regex.matcher(text).find()
}
