/**
 * The adapter kit (published as `plumage/testing`): the contracts every adapter of a port must meet, each a set of
 * named cases an adapter opts into, and the runner to define more (contract.ts says how).
 */
export {
  CASE_SEPARATOR,
  defineContract,
  type Contract,
  type ContractTools,
  type RunOptions,
  type TestApi
} from './contract.js'
export {
  runStoreContract,
  type StoreContractOptions,
  type StoreFixture,
  type StoreRequest
} from './store/store.contract.js'
export {
  runSessionStoreContract,
  type RevocationsOfSessions,
  type SessionStoreContractOptions
} from './session-store.contract.js'
export { runLoginAttemptsContract, type LoginAttemptsContractOptions } from './login-attempts.contract.js'
export { makeKeyedWrite, runKeyedWritesContract, type KeyedWritesContractOptions } from './keyed-writes.contract.js'
export { runUniqueKeysContract, type UniqueKeysContractOptions } from './unique-keys.contract.js'
export {
  runConnectionSessionsContract,
  type ConnectionSessionsContractOptions,
  type ConnectionSessionsRequest
} from './connection-sessions.contract.js'
export { realtimeContractApp } from './realtime-contract-app.js'
export {
  ReceivedEvents,
  runRealtimeTransportContract,
  type RealtimeClient,
  type RealtimeTransportContractOptions,
  type ReceivedEvent,
  type RunningRealtimeTransport
} from './realtime-transport.contract.js'
export {
  runMultiInstanceContract,
  type DirectWrites,
  type InstanceClient,
  type InstanceClients,
  type InstanceLogLine,
  type InstanceSettings,
  type MultiInstanceContractOptions,
  type ReceivedMessageEvent,
  type RelayedClient,
  type ServerInstance,
  type SharedDatabase
} from './instances/multi-instance.contract.js'
