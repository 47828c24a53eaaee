import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto'
import type { AuthenticationRequest } from '../../../domain/service/service.js'

/**
 * How a database's connection sessions keep a login: rows are keyed by a SHA-256 of the private session
 * id (reading the table is not enough to resume someone's session), and the login is sealed with
 * AES-256-GCM under a key derived from AUTH_SECRET (HKDF), the row's id authenticated with it.
 */
export class SealedLogins {
  private readonly key: Buffer

  /** `secret`: AUTH_SECRET, the same on every instance; without one a key is drawn for this process only. */
  constructor(secret: string | undefined) {
    this.key =
      secret === undefined
        ? randomBytes(32)
        : Buffer.from(hkdfSync('sha256', secret, '', 'plumage connection sessions', 32))
  }

  /** The row id of a private session id. */
  rowId(sessionId: string): string {
    return createHash('sha256').update(sessionId).digest('base64url')
  }

  seal(authentication: AuthenticationRequest, rowId: string): string {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.key, iv)
    // The row's id is authenticated too: a sealed login cannot be moved to another session's row.
    cipher.setAAD(Buffer.from(rowId))
    const sealed = Buffer.concat([cipher.update(JSON.stringify(authentication), 'utf8'), cipher.final()])
    return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url')
  }

  /** The login, or undefined when it was sealed under another key or for another row, or was altered. */
  open(value: string, rowId: string): AuthenticationRequest | undefined {
    try {
      const bytes = Buffer.from(value, 'base64url')
      const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, 12))
      decipher.setAAD(Buffer.from(rowId))
      decipher.setAuthTag(bytes.subarray(12, 28))
      const plain = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8')
      return JSON.parse(plain) as AuthenticationRequest
    } catch {
      return undefined
    }
  }
}
