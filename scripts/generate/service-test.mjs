// The use-case test of a generated service: the service on the memory store, built with `new`, no transport.

export function serviceTest(n) {
  const idMatch = n.id === 'string' ? 'expect.stringMatching(/^[0-9a-f-]{36}$/)' : '0'
  const caller = n.auth ? 'ann' : "{ provider: 'rest' }"
  const loggedIn = n.auth
    ? `
/** A caller from outside, logged in (what \`authenticate('jwt')\` leaves in params). */
const as = (id: number) => ({ provider: 'rest', authenticated: true, user: { id } })
const ann = as(1)
`
    : ''
  const auth = n.auth
    ? `
  it('needs a login from outside; internal calls pass', async () => {
    const { service } = appUnderTest()
    await expect(service.find({ provider: 'rest' })).rejects.toMatchObject({ code: 401 })
    await expect(service.create({ text: 'internal' })).resolves.toMatchObject({ text: 'internal' })
  })
`
    : ''
  const owner = n.owner
    ? `
  it('records the owner; only the owner may update, patch or remove a record', async () => {
    const { service } = appUnderTest()
    const record = (await service.create({ text: 'mine' }, ann)) as { id: number | string; userId: number }
    expect(record.userId).toBe(1)
    const bob = as(2)
    await expect(service.patch(record.id, { text: 'theirs' }, bob)).rejects.toMatchObject({ code: 403 })
    await expect(service.update(record.id, { text: 'theirs' }, bob)).rejects.toMatchObject({ code: 403 })
    await expect(service.remove(record.id, bob)).rejects.toMatchObject({ code: 403 })
    await expect(service.patch(record.id, { text: 'still mine' }, ann)).resolves.toMatchObject({ userId: 1 })
    await expect(service.remove(record.id, ann)).resolves.toMatchObject({ text: 'still mine' })
  })
`
    : ''
  return `import { describe, expect, it } from '@jest/globals'
import { App } from '../../src/application/app.js'
import type { Service } from '../../src/domain/service/service.js'
import { InMemoryStoreFactory } from '../../src/infrastructure/memory/in-memory-store-factory.js'
import { AjvSchemaValidator } from '../../src/infrastructure/schema/ajv-schema-validator.js'
import { ${n.use} } from '../../src/services/${n.name}/${n.name}.service.js'

const now = Date.UTC(2026, 0, 1)
${loggedIn}
/** The service on the memory store; \`service\` untyped, as REST and socket clients reach it. */
function appUnderTest() {
  const app = new App({ validator: new AjvSchemaValidator() })
  ${n.use}(app, { stores: new InMemoryStoreFactory(), clock: { now: () => now }${n.auth ? ', authentication: true' : ''} })
  return { app, service: app.service<Service>('${n.name}') }
}

describe('the ${n.name} service', () => {
  it('creates a record: the text trimmed, the id and the timestamps set by the server', async () => {
    const { service } = appUnderTest()
    await expect(service.create({ text: '  Hello ' }, ${caller})).resolves.toEqual({
      id: ${idMatch},
      text: 'Hello',${n.owner ? '\n      userId: 1,' : ''}
      createdAt: new Date(now).toISOString(),
      updatedAt: new Date(now).toISOString()
    })
  })

  it('refuses data the schema does not allow', async () => {
    const { service } = appUnderTest()
    await expect(service.create({}, ${caller})).rejects.toThrow("Invalid data: 'text' is required")
    await expect(service.create({ text: 'x', id: 7 }, ${caller})).rejects.toThrow(
      "'id' is set by the server and may not be sent"
    )
    await expect(service.create({ text: 'x', other: 1 }, ${caller})).rejects.toThrow("'other' is not an allowed field")
  })

  it('finds records by their fields, paginated', async () => {
    const { service } = appUnderTest()
    await service.create({ text: 'one' }, ${caller})
    await service.create({ text: 'two' }, ${caller})
    await expect(service.find({ ...${caller}, query: { text: 'two' } })).resolves.toMatchObject({
      total: 1,
      limit: 10,
      data: [{ text: 'two' }]
    })
  })
${auth}${owner}})
`
}
