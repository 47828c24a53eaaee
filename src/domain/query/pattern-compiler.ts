/**
 * Compiles a `$search` pattern once into a matcher. The reference evaluator (compile-filter.ts) takes
 * one as a parameter, so the domain stays free of a regex engine: the stores pass the RE2 one
 * (src/infrastructure/store-commons/search-pattern.ts), which runs in linear time whatever the pattern.
 */
export type PatternCompiler = (pattern: string) => (text: string) => boolean
