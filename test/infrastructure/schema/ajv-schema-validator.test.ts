import { describe, expect, it } from '@jest/globals'
import { AjvSchemaValidator } from '../../../src/infrastructure/schema/ajv-schema-validator.js'
import { messageSchemas } from '../../../src/services/messages/messages.schema.js'
import { userSchemas } from '../../../src/services/users/users.schema.js'

describe('AjvSchemaValidator', () => {
  const validator = new AjvSchemaValidator()

  it('compiles each schema once', () => {
    expect(validator.compile(userSchemas.data)).toBe(validator.compile(userSchemas.data))
  })

  it('reports every failing field at once, naming the field and the rule', () => {
    const validate = validator.compile(userSchemas.data)
    expect(validate({ email: 'nope', password: 'short', isAdmin: true })).toEqual([
      { field: 'isAdmin', rule: 'additionalProperties', message: "'isAdmin' is not an allowed field" },
      { field: 'email', rule: 'format', message: "'email' must be a valid email address" },
      { field: 'password', rule: 'minLength', message: "'password' must have at least 8 characters" }
    ])
    expect(validate({})).toEqual([
      { field: 'email', rule: 'required', message: "'email' is required" },
      { field: 'password', rule: 'required', message: "'password' is required" }
    ])
    expect(validate({ email: `${'a'.repeat(250)}@x.io`, password: 'p'.repeat(129) })).toEqual([
      expect.objectContaining({ field: 'email', rule: 'maxLength' }),
      { field: 'password', rule: 'maxLength', message: "'password' must have at most 128 characters" }
    ])
    expect(validator.compile(messageSchemas.data)('text')).toEqual([
      { field: '', rule: 'type', message: 'the data must be object' }
    ])
  })

  it('normalises with transform before checking: trimmed text, trimmed email in the case typed', () => {
    const message = { text: '   ' }
    expect(validator.compile(messageSchemas.data)(message)).toEqual([
      { field: 'text', rule: 'minLength', message: "'text' must have at least 1 character" }
    ])
    const user = { email: '  Ann@Example.COM ', password: 'long enough' }
    expect(validator.compile(userSchemas.data)(user)).toEqual([])
    expect(user.email).toBe('Ann@Example.COM')
  })

  it('refuses server-owned fields declared false', () => {
    expect(
      validator.compile(messageSchemas.data)({ text: 'hi', userId: 1, createdAt: '2100-01-01T00:00:00Z', extra: true })
    ).toEqual([
      { field: 'userId', rule: 'readOnly', message: "'userId' is set by the server and may not be sent" },
      { field: 'createdAt', rule: 'readOnly', message: "'createdAt' is set by the server and may not be sent" }
    ])
  })

  it('compiles a schema when it first validates: a schema Ajv refuses fails each validation with its error', () => {
    const validate = validator.compile({ type: 'object', properties: { text: { type: 'string', colour: 'red' } } })
    expect(() => validate({ text: 'hi' })).toThrow('strict mode: unknown keyword: "colour"')
    expect(() => validate({ text: 'hi' })).toThrow('unknown keyword')
  })
})
