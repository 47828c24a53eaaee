import { describe, expect, it } from '@jest/globals'
import bcrypt from 'bcrypt'
import { BcryptPasswordHasher } from '../../../src/infrastructure/auth/bcrypt-password-hasher.js'

describe('BcryptPasswordHasher', () => {
  it('stores $2b$ hashes with the configured cost (10 by default)', async () => {
    const hash = await new BcryptPasswordHasher().hash('secret')
    expect(hash).toMatch(/^\$2b\$10\$[./A-Za-z0-9]{53}$/)
    expect(await new BcryptPasswordHasher(4).hash('secret')).toMatch(/^\$2b\$04\$/)
  })

  it('verifies the right password and refuses a wrong one', async () => {
    const hasher = new BcryptPasswordHasher(4)
    const hash = await hasher.hash('secret')
    await expect(hasher.verify('secret', hash)).resolves.toBe(true)
    await expect(hasher.verify('Secret', hash)).resolves.toBe(false)
  })

  it('verifies $2a$, $2b$ and $2y$ hashes of any cost', async () => {
    const hasher = new BcryptPasswordHasher(10)
    const made = await bcrypt.hash('legacy', 5)
    for (const prefix of ['$2a$', '$2b$', '$2y$']) {
      const hash = prefix + made.slice(4)
      await expect(hasher.verify('legacy', hash)).resolves.toBe(true)
      await expect(hasher.verify('nope', hash)).resolves.toBe(false)
    }
  })

  it('answers false for something that is not a bcrypt hash instead of throwing', async () => {
    const hasher = new BcryptPasswordHasher(4)
    await expect(hasher.verify('x', 'plain-text')).resolves.toBe(false)
    await expect(hasher.verify('x', '')).resolves.toBe(false)
  })
})
