import type { PasswordHasher } from '../../src/domain/auth/password-hasher.js'

/**
 * The in-memory PasswordHasher for unit tests: instant, deterministic, and it records every
 * `verify` so tests can assert that a comparison ran (e.g. also for unknown users).
 * Never use it outside tests: the "hash" is reversible.
 */
export class FakePasswordHasher implements PasswordHasher {
  readonly verified: { plain: string; hash: string }[] = []
  hashed = 0

  async hash(plain: string): Promise<string> {
    this.hashed++
    return `fake$${plain}`
  }

  async verify(plain: string, hash: string): Promise<boolean> {
    this.verified.push({ plain, hash })
    return hash === `fake$${plain}`
  }
}
