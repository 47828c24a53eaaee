/** Random opaque secrets (refresh tokens, session ids) and the one-way hash they are stored by. */
export interface SecretTokens {
  /** A new unguessable token (at least 256 bits), URL-safe. */
  generate(): string
  /** A new random identifier (not secret: session ids). */
  id(): string
  /** The hash a token is stored and looked up by; the same token always gives the same hash. */
  hash(token: string): string
  /**
   * The token that follows `token` in its session: the same for the same token on every instance of a deployment
   * (a refresh retried after its answer was lost gets the one the first attempt issued), unguessable without the
   * deployment's key, so that an old token does not tell its successor to whoever holds it.
   */
  successor(token: string): string
}
export const SecretTokens = Symbol.for('SecretTokens')
