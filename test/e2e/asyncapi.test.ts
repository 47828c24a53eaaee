import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { Parser } from '@asyncapi/parser'
import type { Browser } from 'playwright-core'
import { CHROMIUM, withChromium } from '../support/chromium.js'
import { AUTH_SECRET, startAuthServer, type AuthServer } from '../support/auth-server.js'
import { services } from '../../src/services/registry.js'

/*
 * GET /asyncapi.json is a valid AsyncAPI 3.0 document (checked by @asyncapi/parser) of the socket protocol of
 * every service the reference app registers, on both HTTP engines; GET /asyncapi renders it in Chromium.
 */
type Message = { name: string; payload: Record<string, unknown> }
type Document = {
  asyncapi: string
  channels: Record<string, { address: string; description: string; messages: Record<string, Message> }>
  operations: Record<string, { action: string; channel: { $ref: string }; messages: { $ref: string }[] }>
  components: { schemas: Record<string, Record<string, unknown>> }
}

/** The `.name` of every message the operations of one channel send (`send`) or receive. */
function messageNames(document: Document, channel: string, action: 'send' | 'receive'): string[] {
  const messages = document.channels[channel]!.messages
  return Object.values(document.operations)
    .filter((operation) => operation.action === action && operation.channel.$ref === `#/channels/${channel}`)
    .flatMap((operation) => operation.messages.map((ref) => messages[ref.$ref.split('/').pop()!]!.name))
    .sort()
}

/** Error diagnostics of @asyncapi/parser (severity 0); warnings and hints are style advice. */
async function parserErrors(document: unknown): Promise<unknown[]> {
  const { diagnostics } = await new Parser().parse(document as Parameters<Parser['parse']>[0])
  return diagnostics
    .filter((diagnostic) => diagnostic.severity === 0)
    .map(({ code, message, path }) => ({
      code,
      message,
      path
    }))
}

for (const http of ['express', 'fastify'])
  describe(`GET /asyncapi.json on ${http}`, () => {
    let server: AuthServer
    let document: Document
    beforeAll(async () => {
      server = await startAuthServer({ AUTH_SECRET, BCRYPT_ROUNDS: '4', HTTP: http })
      const response = await fetch(`${server.url}/asyncapi.json`)
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toMatch(/^application\/json/)
      document = (await response.json()) as Document
    })
    afterAll(() => server.close())

    it('validates with @asyncapi/parser as AsyncAPI 3.0', async () => {
      expect(document.asyncapi).toBe('3.0.0')
      expect(await parserErrors(document)).toEqual([])
      // The check can fail: an operation on a channel that does not exist is refused.
      const broken = structuredClone(document)
      Object.values(broken.operations)[0]!.channel = { $ref: '#/channels/nowhere' }
      expect((await parserErrors(broken)).length).toBeGreaterThan(0)
    })

    it("has every service's calls and events, with the schemas OpenAPI uses", async () => {
      const services = server.app.describe()
      expect(Object.values(document.channels).map((channel) => channel.address)).toEqual(
        services
          .map((service) => service.path)
          .filter((path) => path !== 'authentication')
          .concat('authentication')
      )
      for (const service of services.filter((s) => s.path !== 'authentication')) {
        expect(messageNames(document, service.path, 'send')).toEqual([...service.methods].sort())
        expect(messageNames(document, service.path, 'receive')).toEqual(
          service.events.map((event) => `${service.path} ${event}`).sort()
        )
      }
      const messages = document.channels.messages!.messages
      expect(messages.createdEvent!.payload).toEqual({ $ref: '#/components/schemas/Message' })
      // socket.emit('patch', 'messages', id, data, query, ack): the path, then the method's arguments.
      expect(messages.patchCall!.payload).toMatchObject({
        type: 'array',
        items: [
          { const: 'messages' },
          { type: ['integer', 'string', 'null'] },
          { $ref: '#/components/schemas/MessagePatch' },
          { type: 'object' }
        ],
        minItems: 3,
        maxItems: 4
      })
      const openApi = (await (await fetch(`${server.url}/openapi.json`)).json()) as Document & {
        paths: Record<string, unknown>
      }
      expect(document.components.schemas.Message).toEqual(openApi.components.schemas.Message)
      // `messages created` events carry the author a resolver adds: the record's schema declares it.
      expect(document.components.schemas.Message).toMatchObject({
        properties: { user: { type: 'object', properties: { email: { format: 'email' }, avatar: { format: 'uri' } } } }
      })
      expect(document.components.schemas.UserData).toEqual(openApi.components.schemas.UserData)
      // The AsyncAPI routes are not REST operations.
      expect(Object.keys(openApi.paths).filter((path) => path.startsWith('/asyncapi'))).toEqual([])
    })

    it('documents logging in (create on authentication, the older authenticate event) and channel rules', () => {
      expect(messageNames(document, 'authentication', 'send')).toEqual(['authenticate', 'create', 'logout', 'remove'])
      const { createCall, authenticateCall, createReply } = document.channels.authentication!.messages
      expect(JSON.stringify(createCall!.payload)).toContain('"const":"local"')
      expect(JSON.stringify(authenticateCall!.payload)).toContain('"const":"jwt"')
      expect(JSON.stringify(createReply!.payload)).toContain('"$ref":"#/components/schemas/User"')
      expect(JSON.stringify(document)).toContain("app's channel rules")
    })

    it('describes cursor pages: $after, $before and $count in the query, next and prev in the page', () => {
      const { findReply, findCall } = document.channels.messages!.messages
      expect(JSON.stringify(findCall!.payload)).toMatch(/\$after.*\$before.*\$count: false/)
      expect(JSON.stringify(findReply!.payload)).toContain('"required":["skip","data","next","prev"]')
    })
  })

withChromium('the real-time API page at /asyncapi', () => {
  let browser: Browser
  let server: AuthServer
  beforeAll(async () => {
    server = await startAuthServer({ AUTH_SECRET, BCRYPT_ROUNDS: '4' })
    const { chromium } = await import('playwright-core')
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run']
    })
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  it('is linked from /docs and lists each channel with its calls and events', async () => {
    const page = await browser.newPage()
    const errors: Error[] = []
    const requested: string[] = []
    page.on('pageerror', (error) => errors.push(error))
    page.on('request', (request) => requested.push(request.url()))
    await page.goto(`${server.url}/docs/`)
    await page.getByRole('link', { name: /Real-time API/ }).click()
    await page.locator('.operation').first().waitFor()
    expect(page.url()).toBe(`${server.url}/asyncapi`)
    expect(await page.locator('h2').allTextContents()).toEqual([...Object.keys(services), 'authentication', 'Schemas'])
    const messages = await page.locator('.operation code').allTextContents()
    for (const name of ['create', 'find', 'messages created', 'messages removed', 'authenticate'])
      expect(messages).toContain(name)
    expect(await page.locator('.receive .action').first().textContent()).toBe('server sends')
    expect(requested.filter((url) => !url.startsWith(server.url) && !url.startsWith('data:'))).toEqual([])
    expect(errors).toEqual([])
    await page.getByRole('link', { name: /REST API reference/ }).click()
    await page.locator('.opblock').first().waitFor()
    expect(page.url()).toBe(`${server.url}/docs/`)
    await page.close()
  }, 60_000)

  it('renders the Markdown of descriptions and summaries: code, no backticks, no hard-wrapped lines', async () => {
    const page = await browser.newPage()
    await page.goto(`${server.url}/asyncapi`)
    await page.locator('.operation').first().waitFor()
    expect(await page.locator('.description code').count()).toBeGreaterThan(3)
    const texts = await page.locator('.description, .operation > div, .operation h3').allTextContents()
    expect(texts.filter((text) => text.includes('`'))).toEqual([])
    // A paragraph of the source spans several lines; rendered, it is one paragraph that wraps where the page does.
    const paragraphs = await page
      .locator('.description p')
      .evaluateAll((nodes) => nodes.map((node) => (node as HTMLElement).innerText))
    expect(paragraphs.some((text) => text.startsWith('Connect with a socket.io client'))).toBe(true)
    expect(paragraphs.filter((text) => text.includes('\n'))).toEqual([])
    await page.close()
  }, 60_000)

  it('shows /docs with its link to the real-time API styled like Swagger UI, and icons that exist', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    await page.goto(`${server.url}/docs/`)
    await page.locator('.opblock').first().waitFor()
    const link = page.getByRole('link', { name: /Real-time API/ })
    const style = await link.evaluate((node) => {
      const { fontFamily, color } = getComputedStyle(node)
      return { fontFamily, color }
    })
    expect(style).toEqual({ fontFamily: 'sans-serif', color: 'rgb(73, 144, 226)' })
    // The header's text starts where Swagger UI's content does.
    const header = await page.locator('.api-links nav').evaluate((node) => {
      const box = node.getBoundingClientRect()
      return box.left + parseFloat(getComputedStyle(node).paddingLeft)
    })
    const content = await page
      .locator('.swagger-ui .information-container .info')
      .evaluate((node) => node.getBoundingClientRect().left)
    expect(Math.abs(header - content)).toBeLessThan(1)
    for (const path of ['/docs/', '/asyncapi']) {
      await page.goto(`${server.url}${path}`)
      const icon = await page.locator('link[rel="icon"]').evaluate((node) => (node as HTMLLinkElement).href)
      const response = await fetch(icon)
      expect([path, response.status, response.headers.get('content-type')]).toEqual([path, 200, 'image/png'])
    }
    // What browsers ask for when a page names no icon (e.g. /openapi.json opened in a tab): the chat's icon.
    const ico = await fetch(`${server.url}/favicon.ico`)
    expect(ico.status).toBe(200)
    expect(ico.headers.get('content-type')).toMatch(/^image\/(x-icon|vnd\.microsoft\.icon)$/)
    await page.close()
  }, 60_000)
})
