import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { Parser } from '@asyncapi/parser'
import { Validator } from '@seriousme/openapi-schema-validator'
import { App } from '../../../src/application/app.js'
import { AuthenticationService } from '../../../src/application/authentication/authentication-service.js'
import { LocalStrategy } from '../../../src/application/authentication/local-strategy.js'
import { LoginThrottle } from '../../../src/application/sessions/login-throttle.js'
import { JsonWebTokenService } from '../../../src/infrastructure/auth/json-web-token-service.js'
import { InMemoryLoginAttempts } from '../../../src/infrastructure/memory/in-memory-login-attempts.js'
import { FakePasswordHasher } from '../../support/fake-password-hasher.js'
import { asyncApiDocument, openApiDocument } from '../../../src/interfaces/api-docs/index.js'
import { restrictToOwner } from '../../../src/application/authentication/hooks/restrict-to-owner.js'
import { declareStatuses } from '../../../src/application/hook-statuses.js'
import { startHttpServer, type TestServer } from '../http/http-test-server.js'

/*
 * Both documents of an app with what the reference app lacks: a custom method (echo's `shout`), a route
 * placeholder (`users/:userId/posts`), services without schemas and a custom event.
 */
type Operation = {
  operationId: string
  parameters?: { name: string; in: string; required?: boolean; schema: unknown }[]
  requestBody?: unknown
  responses: Record<string, unknown>
}
let server: TestServer
const options = { title: 'documents', version: '1' }

beforeAll(async () => {
  server = await startHttpServer('express')
  server.app.use(
    'alerts',
    {
      async create(data: unknown) {
        return data
      }
    },
    { events: ['alarm'] }
  )
})
afterAll(() => server.close())

describe('OpenAPI', () => {
  it('lists custom methods on POST with the X-Service-Method header, and stays valid', async () => {
    const document = openApiDocument(server.app, options) as { paths: Record<string, Record<string, Operation>> }
    const result = await new Validator().validate(document as unknown as Record<string, unknown>)
    expect(result.errors ?? []).toEqual([])
    const post = document.paths['/echo']!.post!
    expect(post.operationId).toBe('echo_create')
    expect(post.parameters).toContainEqual(
      expect.objectContaining({ name: 'X-Service-Method', in: 'header', required: false, schema: { enum: ['shout'] } })
    )
    expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(['200', '201', '405']))
    // A service without custom methods has no such header.
    const users = document.paths['/users']!.post!
    expect(users.parameters?.map((parameter) => parameter.name) ?? []).not.toContain('X-Service-Method')
  })

  it('documents the login fields of the strategies the authentication service has, and 429 when it throttles', () => {
    const loginOf = (throttle?: LoginThrottle) => {
      const app = new App()
      const auth = new AuthenticationService({
        tokens: new JsonWebTokenService({ secret: 'documents-secret' }),
        ...(throttle ? { throttle } : {})
      })
      app.use(
        'authentication',
        auth.register(new LocalStrategy(new FakePasswordHasher(), { usernameField: 'username' }))
      )
      const document = openApiDocument(app, options) as { paths: Record<string, Record<string, Operation>> }
      return document.paths['/authentication']!.post!
    }
    const clock = { now: () => 0 }
    const throttled = loginOf(new LoginThrottle(new InMemoryLoginAttempts(), clock, { maxFailures: 3 }))
    expect(Object.keys(throttled.responses)).toContain('429')
    // One strategy: its shape, no oneOf; no sessions: no refresh token answered.
    expect(throttled.requestBody).toMatchObject({
      content: { 'application/json': { schema: { title: 'local', required: ['strategy', 'username', 'password'] } } }
    })
    expect(JSON.stringify(throttled.responses['201'])).not.toContain('refreshToken')
    const off = loginOf(new LoginThrottle(new InMemoryLoginAttempts(), clock, { maxFailures: 0 }))
    expect(Object.keys(off.responses)).not.toContain('429')
  })
})

describe('OpenAPI error statuses', () => {
  it('lists 403 only where restrictToOwner runs, and the statuses a hook of the app declares', async () => {
    const app = new App()
    const record = { id: 1, ownerId: 1 }
    app.use('notes', {
      async get() {
        return record
      },
      async update() {
        return record
      },
      async patch() {
        return record
      },
      async remove() {
        return record
      }
    })
    const paid = declareStatuses(() => undefined, 402)
    app.service('notes').hooks({ before: { patch: [paid], remove: [restrictToOwner({ ownerField: 'ownerId' })] } })
    const document = openApiDocument(app, options) as {
      paths: Record<string, Record<string, Operation>>
      components: { responses: Record<string, unknown> }
    }
    const result = await new Validator().validate(document as unknown as Record<string, unknown>)
    expect(result.errors ?? []).toEqual([])
    const statuses = (method: string) => Object.keys(document.paths['/notes/{id}']![method]!.responses)
    expect(statuses('delete')).toEqual(['200', '400', '403', '404', '500', '503'])
    expect(statuses('put')).toEqual(['200', '400', '404', '413', '500', '503'])
    expect(statuses('patch')).toEqual(['200', '400', '402', '404', '413', '500', '503'])
    expect(JSON.stringify(document.components.responses.PaymentError)).toContain(
      '"className":{"const":"payment-error"}'
    )
  })
})

describe('AsyncAPI', () => {
  it('validates with @asyncapi/parser, with custom methods, route values and custom events', async () => {
    const document = asyncApiDocument(server.app, options) as {
      channels: Record<string, { address: string; parameters?: object; messages: Record<string, { name: string }> }>
    }
    const { diagnostics } = await new Parser().parse(document as unknown as Parameters<Parser['parse']>[0])
    expect(diagnostics.filter((diagnostic) => diagnostic.severity === 0)).toEqual([])
    expect(document.channels.echo!.messages.shoutCall!.name).toBe('shout')
    expect(document.channels.usersUserIdPosts).toMatchObject({
      address: 'users/{userId}/posts',
      parameters: { userId: {} }
    })
    expect(document.channels.alerts!.messages.alarmEvent).toMatchObject({ name: 'alerts alarm', payload: {} })
    expect(document.channels.alerts!.messages.createdEvent!.name).toBe('alerts created')
  })
})
