import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { Validator } from '@seriousme/openapi-schema-validator'
import type { Browser } from 'playwright-core'
import { STANDARD_METHODS } from '../../src/domain/service/method-layout.js'
import { CHROMIUM, withChromium } from '../support/chromium.js'
import { AUTH_SECRET, startAuthServer, type AuthServer } from '../support/auth-server.js'

/*
 * GET /openapi.json is a valid OpenAPI 3.1 document covering every external method of every service
 * the reference app registers, and /docs renders it in headless Chromium from the package's assets.
 */
let server: AuthServer
type Operation = {
  security?: unknown[]
  responses: Record<string, unknown>
  parameters?: { name: string }[]
  requestBody?: unknown
}
type Document = {
  openapi: string
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, Record<string, unknown>> }
}
let document: Document

beforeAll(async () => {
  server = await startAuthServer({ AUTH_SECRET, BCRYPT_ROUNDS: '4' })
  const response = await fetch(`${server.url}/openapi.json`)
  expect(response.status).toBe(200)
  document = (await response.json()) as Document
})
afterAll(() => server.close())

/** The REST route and verb of each standard method (id-less patch/remove where multi allows them). */
const ROUTES: Record<string, [item: boolean, verb: string]> = {
  find: [false, 'get'],
  create: [false, 'post'],
  get: [true, 'get'],
  update: [true, 'put'],
  patch: [true, 'patch'],
  remove: [true, 'delete']
}

describe('GET /openapi.json', () => {
  it('validates against the OpenAPI 3.1 schema', async () => {
    const validator = new Validator()
    const result = await validator.validate(document as unknown as Record<string, unknown>)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(validator.version).toBe('3.1')
    // Swagger UI supports only the default dialect (OpenAPI's own, a superset of 2020-12): the field is left out.
    expect(document).not.toHaveProperty('jsonSchemaDialect')
    // The check can fail: a document missing its info object is refused.
    const { info: _info, ...withoutInfo } = document as unknown as Record<string, unknown>
    expect((await new Validator().validate(withoutInfo)).valid).toBe(false)
  })

  it('has every external method of every registered service', () => {
    const services = server.app.describe()
    expect(services.map((service) => service.path).sort()).toEqual(['authentication', 'messages', 'users'])
    for (const service of services) {
      for (const method of service.methods) {
        expect(STANDARD_METHODS).toContain(method)
        const [item, verb] = ROUTES[method]!
        const path = item && service.path !== 'authentication' ? `/${service.path}/{id}` : `/${service.path}`
        expect([service.path, method, document.paths[path]?.[verb] !== undefined]).toEqual([service.path, method, true])
      }
    }
    // messages: multi patch/remove on the collection; create takes one message or an array.
    expect(Object.keys(document.paths['/messages']!).sort()).toEqual(['delete', 'get', 'patch', 'post'])
    expect(JSON.stringify(document.paths['/messages']!.post!.requestBody)).toContain('"type":"array"')
  })

  it('documents schemas, query operators, pagination, errors and bearer authentication', () => {
    const { schemas } = document.components
    expect(schemas.User).toMatchObject({ properties: { email: { format: 'email', maxLength: 254 } } })
    expect(Object.keys(schemas.User.properties as object)).toEqual(['id', 'email', 'name', 'avatar'])
    // A message's author is resolved by the server: declared in the record, refused in requests.
    expect(schemas.Message).toMatchObject({
      properties: { user: { type: 'object', required: ['id', 'email'], properties: { avatar: { format: 'uri' } } } }
    })
    expect(schemas.MessageData).toMatchObject({ properties: { user: { not: {} } } })
    expect(schemas.UserData).toMatchObject({
      required: ['email', 'password'],
      properties: { password: { minLength: 8, maxLength: 128 } }
    })
    expect(schemas.MessageData).toMatchObject({
      required: ['text'],
      properties: { text: { minLength: 1, maxLength: 2000 }, userId: { not: {} } }
    })
    const find = document.paths['/messages']!.get!
    const names = find.parameters!.map((parameter) => parameter.name)
    for (const name of [
      '$limit',
      '$skip',
      '$after',
      '$before',
      '$count',
      '$sort',
      '$select',
      'createdAt',
      'createdAt[$gt]',
      'userId[$in]',
      'text[$nin]',
      'id[$ne]',
      'text[$search]'
    ])
      expect(names).toContain(name)
    expect(JSON.stringify(find.responses['200'])).toContain('"required":["total","limit","skip","data"]')
    // A cursor page: no total with $count=false, and the cursors of the pages around it.
    expect(JSON.stringify(find.responses['200'])).toContain('"required":["limit","skip","data","next","prev"]')
    expect(find.security).toEqual([{ bearerAuth: [] }])
    expect(Object.keys(find.responses)).toEqual(['200', '400', '401', '500', '503'])
    const signup = document.paths['/users']!.post!
    expect(signup.security).toBeUndefined()
    expect(Object.keys(signup.responses)).toEqual(['201', '400', '405', '409', '413', '500', '503'])
    expect(Object.keys(document.paths['/messages/{id}']!.patch!.responses)).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '413',
      '500',
      '503'
    ])
    expect(Object.keys(document.paths['/messages/{id}']!.get!.responses)).toEqual([
      '200',
      '400',
      '401',
      '404',
      '500',
      '503'
    ])
    expect(schemas.Error).toMatchObject({ required: ['name', 'message', 'code', 'className'] })
  })

  it('gives every error response the Feathers error body with its name, code and class', () => {
    const responses = (document.components as unknown as { responses: Record<string, { content: unknown }> }).responses
    expect(signupConflict()).toEqual({ $ref: '#/components/responses/Conflict' })
    expect(responses.Conflict!.content).toEqual({
      'application/json': {
        schema: {
          allOf: [
            { $ref: '#/components/schemas/Error' },
            {
              type: 'object',
              properties: { name: { const: 'Conflict' }, code: { const: 409 }, className: { const: 'conflict' } }
            }
          ]
        }
      }
    })
    // Every status any operation names has its component, and every error the server sends fits it.
    const named = Object.values(document.paths)
      .flatMap((operations) => Object.values(operations))
      .flatMap((operation) => Object.entries(operation.responses))
      .filter(([status]) => Number(status) >= 400)
    expect(named.length).toBeGreaterThan(40)
    for (const [, response] of named) {
      const name = (response as { $ref: string }).$ref.replace('#/components/responses/', '')
      expect(Object.keys(responses)).toContain(name)
    }
    expect(Object.keys(responses)).toEqual([
      'BadRequest',
      'NotAuthenticated',
      'Forbidden',
      'NotFound',
      'MethodNotAllowed',
      'Conflict',
      'PayloadTooLarge',
      'TooManyRequests',
      'GeneralError',
      'Unavailable'
    ])
  })

  it('documents logging in with each strategy the server accepts, and what it answers', async () => {
    const login = document.paths['/authentication']!.post! as Operation & { requestBody: unknown }
    const body = JSON.parse(JSON.stringify(login.requestBody)) as {
      content: { 'application/json': { schema: { oneOf: { title: string; required: string[] }[] } } }
    }
    const shapes = body.content['application/json'].schema.oneOf
    expect(shapes.map(({ title, required }) => [title, required])).toEqual([
      ['jwt', ['strategy', 'accessToken']],
      ['local', ['strategy', 'email', 'password']],
      ['refresh', ['strategy', 'refreshToken']]
    ])
    // No 429: this server does not throttle logins (LOGIN_MAX_FAILURES=0).
    expect(Object.keys(login.responses)).toEqual(['201', '400', '401', '413', '500', '503'])
    const answer = (login.responses['201'] as { content: { 'application/json': { schema: Schema } } }).content[
      'application/json'
    ].schema
    expect(answer.required).toEqual(['accessToken', 'authentication', 'refreshToken'])
    expect(Object.keys(answer.properties as object)).toEqual(['accessToken', 'authentication', 'user', 'refreshToken'])
    expect(answer.properties).toMatchObject({ user: { $ref: '#/components/schemas/User' } })
    // What the server really answers to a signup and a local login has every field the document requires.
    const credentials = { email: 'openapi@example.com', password: 'openapi-password' }
    const post = (path: string, data: unknown) =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(data)
      })
    expect((await post('/users', credentials)).status).toBe(201)
    const again = await post('/users', credentials)
    expect(again.status).toBe(409)
    expect(await again.json()).toMatchObject({ name: 'Conflict', code: 409, className: 'conflict' })
    const loggedIn = await post('/authentication', { strategy: 'local', ...credentials })
    expect(loggedIn.status).toBe(201)
    const result = (await loggedIn.json()) as Record<string, unknown>
    for (const field of answer.required as string[]) expect(result).toHaveProperty(field)
    const refreshed = await post('/authentication', { strategy: 'refresh', refreshToken: result.refreshToken })
    expect(refreshed.status).toBe(201)
  })
})

type Schema = Record<string, unknown>
const signupConflict = () => document.paths['/users']!.post!.responses['409']

withChromium('the API reference page at /docs', () => {
  let browser: Browser
  beforeAll(async () => {
    const { chromium } = await import('playwright-core')
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run']
    })
  }, 60_000)
  afterAll(() => browser?.close())

  it('renders every operation from the server itself, with no request elsewhere', async () => {
    const page = await browser.newPage()
    const requested: string[] = []
    const errors: Error[] = []
    page.on('request', (request) => requested.push(request.url()))
    page.on('pageerror', (error) => errors.push(error))
    const response = await page.goto(`${server.url}/docs`)
    expect(response?.status()).toBe(200)
    expect(page.url()).toBe(`${server.url}/docs/`)
    await page.locator('.opblock').first().waitFor()
    await expect(page.locator('.info .title').textContent()).resolves.toContain('plumage')
    const operations = await page.locator('.opblock-summary-path').allTextContents()
    const distinct = new Set(operations.map((text) => text.replace(/\u200b/g, '')))
    expect([...distinct].sort()).toEqual(['/authentication', '/messages', '/messages/{id}', '/users', '/users/{id}'])
    // users 6, messages 8 (with multi patch and remove), authentication 2 (login, logout).
    expect(await page.locator('.opblock').count()).toBe(16)
    await page
      .getByRole('button', { name: /Authorize/ })
      .first()
      .waitFor()
    expect(requested.filter((url) => !url.startsWith(server.url) && !url.startsWith('data:'))).toEqual([])
    expect(requested).toContain(`${server.url}/openapi.json`)
    expect(errors).toEqual([])
    // No warning or error banner (Swagger UI warns about a jsonSchemaDialect other than OpenAPI's own, for one).
    expect(await page.locator('.errors-wrapper').count()).toBe(0)
    expect(await page.locator('body').textContent()).not.toMatch(/jsonSchemaDialect|not supported/)
    await page.close()
  }, 60_000)
})
