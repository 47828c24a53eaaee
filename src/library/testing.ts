/**
 * `plumage/testing`: the adapter kit (src/testing) — the contracts an adapter of each port runs
 * beside its own tests, opting into named cases, and defineContract to write more.
 *
 * @module plumage/testing
 */
export * from '../testing/index.js'
