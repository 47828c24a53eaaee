import type bcryptModule from 'bcrypt'
import { createRequire } from 'node:module'
import type { PasswordHasher } from '../../domain/auth/password-hasher.js'

/** The native binding loads at the first hash or login, not at startup: it costs an idle server ~3 MB. */
let binding: typeof bcryptModule | undefined
const bcrypt = () => (binding ??= createRequire(import.meta.url)('bcrypt') as typeof bcryptModule)

/**
 * bcrypt via the native `bcrypt` package. New hashes are `$2b$<rounds>$`; any `$2a$`/`$2b$`/`$2y$`
 * hash of any cost verifies (hashes made by v3-era apps, PHP or bcryptjs). `$2y$` is the same
 * algorithm under PHP's prefix, which the native binding does not parse, so it is read as `$2b$`.
 */
export class BcryptPasswordHasher implements PasswordHasher {
  constructor(private readonly rounds = 10) {}

  hash(plain: string): Promise<string> {
    return bcrypt().hash(plain, this.rounds)
  }

  async verify(plain: string, hash: string): Promise<boolean> {
    if (!/^\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$/.test(hash)) return false
    return bcrypt().compare(plain, hash.startsWith('$2y$') ? `$2b$${hash.slice(4)}` : hash)
  }
}
