import { describe, expect, it } from '@jest/globals'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError } from '../../../src/infrastructure/config/environment.js'
import { readPostgresSettings, redactPostgresUrl } from '../../../src/infrastructure/postgres/postgres-settings.js'

const secretFile = (contents: string): string => {
  const file = join(mkdtempSync(join(tmpdir(), 'pg-settings-')), 'password')
  writeFileSync(file, contents)
  return file
}

describe('readPostgresSettings', () => {
  it('reads the URL, the pool size and the timeout, with defaults', () => {
    expect(readPostgresSettings({})).toEqual({
      url: 'postgres://postgres@127.0.0.1:5432/plumage',
      poolSize: 10,
      timeoutMs: 30_000
    })
    expect(
      readPostgresSettings({
        POSTGRES_URL: 'postgresql://app:pw@db:5433/app?sslmode=verify-full',
        POSTGRES_POOL_SIZE: '25',
        POSTGRES_TIMEOUT: '5'
      })
    ).toEqual({ url: 'postgresql://app:pw@db:5433/app?sslmode=verify-full', poolSize: 25, timeoutMs: 5000 })
  })

  it('reads the password from POSTGRES_PASSWORD_FILE without its final line break', () => {
    const settings = readPostgresSettings({
      POSTGRES_URL: 'postgres://app@db/app',
      POSTGRES_PASSWORD_FILE: secretFile('s3cret\n')
    })
    expect(settings.password).toBe('s3cret')
  })

  it('refuses bad settings with one line that never shows the password', () => {
    const refusal = (env: Record<string, string>): string => {
      try {
        readPostgresSettings(env)
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError)
        return (error as Error).message
      }
      throw new Error('accepted')
    }
    expect(refusal({ POSTGRES_URL: 'mysql://app:hunter2@db/app' })).toBe(
      "POSTGRES_URL must start with postgres:// or postgresql:// (got 'mysql://app:***@db/app')"
    )
    expect(refusal({ POSTGRES_URL: 'postgres://app:hunter2@db/app?sslmode=maybe' })).toMatch(/sslmode must be/)
    expect(refusal({ POSTGRES_URL: 'not a url hunter2' })).toMatch(/^POSTGRES_URL must be a URL/)
    expect(refusal({ POSTGRES_URL: 'postgres://app:hunter2@db/app', POSTGRES_PASSWORD_FILE: secretFile('x') })).toMatch(
      /give the password in one of them only/
    )
    expect(refusal({ POSTGRES_URL: 'postgres://app@db/app', POSTGRES_PASSWORD_FILE: '/nonexistent/pw' })).toBe(
      "POSTGRES_PASSWORD_FILE names a file that cannot be read ('/nonexistent/pw': ENOENT)"
    )
    expect(refusal({ POSTGRES_URL: 'postgres://app@db/app', POSTGRES_PASSWORD_FILE: secretFile('\n') })).toMatch(
      /empty file/
    )
    expect(refusal({ POSTGRES_POOL_SIZE: '0' })).toMatch(/^POSTGRES_POOL_SIZE must be an integer/)
    for (const message of [refusal({ POSTGRES_URL: 'mysql://app:hunter2@db/app' })])
      expect(message).not.toContain('hunter2')
  })

  it('redacts passwords in the user part and in a password parameter', () => {
    expect(redactPostgresUrl('postgres://app:hunter2@db:5432/app')).toBe('postgres://app:***@db:5432/app')
    expect(redactPostgresUrl('postgres://app@db/app?password=hunter2&sslmode=require')).toBe(
      'postgres://app@db/app?password=***&sslmode=require'
    )
    expect(redactPostgresUrl('postgres://db/app')).toBe('postgres://db/app')
  })
})
