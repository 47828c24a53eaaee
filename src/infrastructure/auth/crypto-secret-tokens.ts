import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto'
import { injectable } from 'inversify'
import type { SecretTokens } from '../../domain/auth/secret-tokens.js'

/**
 * Refresh tokens from node:crypto: 32 random bytes (256 bits) in base64url, stored by their SHA-256.
 * A fast hash is right here (unlike passwords): the token is random, so there is nothing to guess.
 * A token's successor is its HMAC-SHA256 under `key` (the deployment's AUTH_SECRET; a random key of this process
 * when none is given), labelled so that it is never the MAC of anything else signed with that secret.
 */
@injectable()
export class CryptoSecretTokens implements SecretTokens {
  private readonly key: string | Buffer

  constructor(key?: string) {
    this.key = key ?? randomBytes(32)
  }

  generate(): string {
    return randomBytes(32).toString('base64url')
  }

  id(): string {
    return randomUUID()
  }

  successor(token: string): string {
    return createHmac('sha256', this.key)
      .update(`plumage refresh token successor\0${token}`, 'utf8')
      .digest('base64url')
  }

  hash(token: string): string {
    return createHash('sha256').update(token, 'utf8').digest('hex')
  }
}
