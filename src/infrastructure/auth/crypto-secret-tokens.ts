import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { injectable } from 'inversify'
import type { SecretTokens } from '../../domain/auth/secret-tokens.js'

/**
 * Refresh tokens from node:crypto: 32 random bytes (256 bits) in base64url, stored by their SHA-256.
 * A fast hash is right here (unlike passwords): the token is random, so there is nothing to guess.
 */
@injectable()
export class CryptoSecretTokens implements SecretTokens {
  generate(): string {
    return randomBytes(32).toString('base64url')
  }

  id(): string {
    return randomUUID()
  }

  hash(token: string): string {
    return createHash('sha256').update(token, 'utf8').digest('hex')
  }
}
