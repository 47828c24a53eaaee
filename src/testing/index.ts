/**
 * The adapter kit (published as `plumage/testing`): the contracts every adapter of a port must meet, each
 * a set of named cases an adapter opts into, and the runner to define more (contract.ts says how).
 */
export {
  CASE_SEPARATOR,
  defineContract,
  type Contract,
  type ContractTools,
  type RunOptions,
  type TestApi
} from './contract.js'
