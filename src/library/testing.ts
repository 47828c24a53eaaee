/*
 * `plumage/testing`: the adapter kit (src/testing) — the contracts an adapter of each port runs
 * beside its own tests, opting into named cases, and defineContract to write more.
 */
export * from '../testing/index.js'
