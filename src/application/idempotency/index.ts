/*
 * The idempotency module's application part (README "Retries and idempotency", ADR 0020): the app hooks that read a
 * call's idempotency key and hand it to the store as a KeyedWrite, and the parsing of the key.
 */
export { idempotencyHooks, QUERY_KEY, type IdempotencySettings } from './idempotent-writes.js'
export { MAX_KEY_LENGTH, parseIdempotencyKey } from './idempotency-key.js'
