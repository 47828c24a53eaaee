/** Random opaque secrets (refresh tokens, session ids) and the one-way hash they are stored by. */
export interface SecretTokens {
  /** A new unguessable token (at least 256 bits), URL-safe. */
  generate(): string
  /** A new random identifier (not secret: session ids). */
  id(): string
  /** The hash a token is stored and looked up by; the same token always gives the same hash. */
  hash(token: string): string
}
export const SecretTokens = Symbol.for('SecretTokens')
