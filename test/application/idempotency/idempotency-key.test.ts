import { describe, expect, it } from '@jest/globals'
import { MAX_KEY_LENGTH, parseIdempotencyKey } from '../../../src/application/idempotency/index.js'

describe('parseIdempotencyKey', () => {
  it('reads an sf-string, unescaping quotes and backslashes, and a bare token', () => {
    expect(parseIdempotencyKey('"8e03978e-40d5-43e8-bc93-6894a57f9324"')).toBe('8e03978e-40d5-43e8-bc93-6894a57f9324')
    expect(parseIdempotencyKey('"a \\"quoted\\" \\\\ key"')).toBe('a "quoted" \\ key')
    expect(parseIdempotencyKey('8e03978e-40d5-43e8-bc93-6894a57f9324')).toBe('8e03978e-40d5-43e8-bc93-6894a57f9324')
    expect(parseIdempotencyKey('  "padded"  ')).toBe('padded')
    expect(parseIdempotencyKey(`"${'k'.repeat(MAX_KEY_LENGTH)}"`)).toHaveLength(MAX_KEY_LENGTH)
  })

  it.each([
    ['an empty string', '""'],
    ['an over-long key', `"${'k'.repeat(MAX_KEY_LENGTH + 1)}"`],
    ['an unterminated string', '"abc'],
    ['a lone backslash escape', '"a\\b"'],
    ['a control character', '"a\u0001b"'],
    ['non-ASCII', '"clé"'],
    ['a list', '"a", "b"'],
    ['parameters', '"a";p=1'],
    ['spaces in a bare key', 'two words'],
    ['an array (repeated header)', ['"a"', '"b"']],
    ['a number', 42]
  ])('refuses %s with a 400', (_what, value) => {
    expect(() => parseIdempotencyKey(value)).toThrow(expect.objectContaining({ code: 400, name: 'BadRequest' }))
  })
})
