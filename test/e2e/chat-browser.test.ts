import { afterAll, beforeAll, expect, it } from '@jest/globals'
import { execFile } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { Browser, Page } from 'playwright-core'
import { App } from '../../src/application/app.js'
import { buildContainer, httpAppOptions, startRealtime } from '../../src/container.js'
import { silentLogger } from '../../src/domain/logger.js'
import type { Data, Paginated } from '../../src/domain/service/service.js'
import { loadConfig } from '../../src/infrastructure/config/config.js'
import { listen, type RunningServer } from '../../src/interfaces/http/http-server.js'
import { createRestApp } from '../../src/interfaces/rest/rest-app.js'
import type { RealtimeTransport } from '../../src/interfaces/realtime/realtime-transport.js'
import { CHROMIUM, chromiumAvailable, withChromium } from '../support/chromium.js'
import { gravatar } from '../support/gravatar.js'
import { startTcpProxy } from '../support/tcp-proxy.js'

/*
 * The chat page in headless Debian Chromium (never a downloaded browser): two people in two
 * browser contexts (separate localStorage), a message typed by one appears live for the other.
 * The page is the real public/index.html with app.js built by scripts/build-client.mjs.
 */

const root = process.cwd()
let staticDir: string
let app: App
let server: RunningServer
let browser: Browser
let socketIo: RealtimeTransport
/** Uncaught errors of any page: the script must never throw, whatever the server answers. */
const pageErrors: Error[] = []
/** The socket.io frames each page sent: a live query is a `watch` event. */
const framesSent = new WeakMap<Page, string[]>()
const watchesMessages = (page: Page) => framesSent.get(page)!.some((frame) => /^42\d*\["watch","messages",/.test(frame))

/** The reference app with the chat page on a free port; live queries on unless `env` says LIVE_QUERIES=false. */
async function startChat(env: Record<string, string> = {}) {
  const config = loadConfig({
    NODE_ENV: 'test',
    AUTH_SECRET: 'chat-browser-test-secret',
    BCRYPT_ROUNDS: '4',
    STATIC_DIR: staticDir,
    ...env
  })
  const container = await buildContainer(config, { logger: silentLogger })
  const app = container.get<App>(App)
  await app.setup()
  const server = await listen(createRestApp(app, httpAppOptions(container, app)), 0, '127.0.0.1')
  return { app, server, socketIo: startRealtime(container, server.server)! }
}

beforeAll(async () => {
  if (!chromiumAvailable) return
  staticDir = await mkdtemp(join(tmpdir(), 'plumage-chat-'))
  await promisify(execFile)(process.execPath, [join(root, 'scripts', 'build-client.mjs'), staticDir])
  for (const file of ['index.html', 'style.css']) await copyFile(join(root, 'public', file), join(staticDir, file))

  ;({ app, server, socketIo } = await startChat())

  const { chromium } = await import('playwright-core')
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run'
    ]
  })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  socketIo?.disconnectAll()
  await server?.close()
  await app?.teardown()
  if (staticDir) await rm(staticDir, { recursive: true, force: true })
})

async function openPage(url = server.url): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 800, height: 640 } })
  const page = await context.newPage()
  page.on('pageerror', (error) => pageErrors.push(error))
  const frames: string[] = []
  framesSent.set(page, frames)
  page.on('websocket', (socket) => socket.on('framesent', ({ payload }) => frames.push(String(payload))))
  await page.goto(url)
  await page.locator('#login').waitFor()
  return page
}

/** Waits until exactly `count` elements match (the page renders asynchronously). */
async function countSoon(page: Page, selector: string, count: number): Promise<number> {
  await page.waitForFunction(([css, n]) => document.querySelectorAll(css as string).length === n, [
    selector,
    count
  ] as const)
  return page.locator(selector).count()
}

async function signIn(page: Page, email: string, password: string, button: 'Log in' | 'Sign up'): Promise<void> {
  await page.fill('#email', email)
  await page.fill('#password', password)
  await page.getByRole('button', { name: button }).click()
}

withChromium('the chat page in Chromium', () => {
  it('serves index.html at / and shows the sign-in form', async () => {
    const response = await fetch(`${server.url}/`)
    expect(response.status).toBe(200)
    expect(await response.text()).toContain('<title>plumage chat</title>')
  })

  it.each([1280, 375])('centres the sign-in card at %i px wide, as the screenshot shows', async (width) => {
    const context = await browser.newContext({ viewport: { width, height: 720 } })
    const page = await context.newPage()
    await page.goto(server.url)
    await page.locator('#login').waitFor()
    const card = (await page.locator('#login').boundingBox())!
    const shot = await page.screenshot()
    // The screenshot's pixels, read back by Chromium: on the card's middle row, the white (#fff) run is the
    // card (the page around it is #f4f5f8); its margins to both edges of the window must match.
    const decoder = await context.newPage()
    const [left, right] = await decoder.evaluate(
      async ({ png, y }) => {
        const image = new Image()
        image.src = `data:image/png;base64,${png}`
        await image.decode()
        const canvas = Object.assign(document.createElement('canvas'), { width: image.width, height: image.height })
        const context2d = canvas.getContext('2d')!
        context2d.drawImage(image, 0, 0)
        const row = context2d.getImageData(0, y, image.width, 1).data
        const white = (x: number) => row[x * 4] === 255 && row[x * 4 + 1] === 255 && row[x * 4 + 2] === 255
        let first = 0
        while (first < image.width && !white(first)) first++
        let last = image.width - 1
        while (last > 0 && !white(last)) last--
        return [first, image.width - 1 - last]
      },
      { png: shot.toString('base64'), y: Math.round(card.y + 8) }
    )
    expect(left).toBeGreaterThan(0)
    expect(Math.abs(left - right)).toBeLessThanOrEqual(2)
    expect(Math.abs(card.x + card.width / 2 - width / 2)).toBeLessThanOrEqual(1)
    await context.close()
  })

  it('signs two people up, pages the history and delivers messages live both ways', async () => {
    const ann = await openPage()
    await signIn(ann, 'ann@example.com', 'ann-secret', 'Sign up')
    await ann.locator('#chat').waitFor()
    await expect(ann.locator('#status').textContent()).resolves.toBe('Signed in as ann@example.com')

    // Older history than one page: 22 messages, the newest 20 shown first.
    const messages = app.service('messages')
    const annId = ((await app.service('users').find({ query: { email: 'ann@example.com' } })) as Paginated<Data>)
      .data[0]!.id
    for (let n = 1; n <= 22; n++)
      await messages.create(
        { text: `history ${n}`, userId: annId, createdAt: new Date(Date.now() - (23 - n) * 60_000).toISOString() },
        {}
      )

    const bob = await openPage()
    await signIn(bob, 'bob@example.com', 'wrong', 'Log in')
    await bob.locator('#error').waitFor()
    await expect(bob.locator('#error').textContent()).resolves.toBe('Invalid login')
    await signIn(bob, 'bob@example.com', 'bob-secret', 'Sign up')
    await bob.locator('#chat').waitFor()
    await bob.locator('#error').waitFor({ state: 'hidden' })
    expect(await countSoon(bob, '#messages li', 20)).toBe(20)
    await expect(bob.locator('#messages li').last().textContent()).resolves.toContain('history 22')
    await bob.click('#older')
    expect(await countSoon(bob, '#messages li', 22)).toBe(22)
    await expect(bob.locator('#messages li').first().textContent()).resolves.toContain('history 1')
    expect(await bob.locator('#older').isHidden()).toBe(true)

    await ann.fill('#text', 'Hello Bob <b>not bold</b>')
    await ann.press('#text', 'Enter')
    const received = bob.locator('#messages li', { hasText: 'Hello Bob' })
    await received.waitFor()
    // The author comes with the message (resolved by the server): their email, and their Gravatar beside it.
    await expect(received.locator('strong').textContent()).resolves.toBe('ann@example.com')
    await expect(received.locator('strong').getAttribute('title')).resolves.toBe('ann@example.com')
    await expect(received.locator('strong img.avatar').getAttribute('src')).resolves.toBe(gravatar('ann@example.com'))
    expect(await received.locator('b').count()).toBe(0)
    // The list is a live query: a removed message leaves both pages, and Ann's window of the newest 20 refills
    // with the message before it.
    expect(watchesMessages(bob)).toBe(true)
    const hello = (await messages.find({ query: { text: 'Hello Bob <b>not bold</b>' } })) as Paginated<Data>
    await messages.remove(hello.data[0]!.id as string, {})
    await received.waitFor({ state: 'detached' })
    await ann.locator('#messages li', { hasText: 'Hello Bob' }).waitFor({ state: 'detached' })
    expect(await countSoon(bob, '#messages li', 22)).toBe(22)
    await ann.locator('#messages li', { hasText: 'history 3' }).waitFor()
    expect(await countSoon(ann, '#messages li', 20)).toBe(20)
    await ann.fill('#text', 'Hello Bob')
    await ann.press('#text', 'Enter')
    await received.waitFor()

    await bob.fill('#text', 'Hi Ann!')
    await bob.click('button:text("Send")')
    await ann.locator('#messages li', { hasText: 'Hi Ann!' }).waitFor()
    expect(await ann.locator('#messages li', { hasText: 'Hello Bob' }).count()).toBe(1)

    await mkdir(join(root, 'test-artifacts'), { recursive: true })
    await ann.screenshot({ path: join(root, 'test-artifacts', 'chat-ann.png'), fullPage: true })
    await bob.screenshot({ path: join(root, 'test-artifacts', 'chat-bob.png'), fullPage: true })

    await bob.click('#logout')
    await bob.locator('#login').waitFor()
    await ann.fill('#text', 'after Bob left')
    await ann.press('#text', 'Enter')
    await ann.locator('#messages li', { hasText: 'after Bob left' }).waitFor()
    expect(await bob.locator('#messages li', { hasText: 'after Bob left' }).count()).toBe(0)

    // A reload logs in again from the token in localStorage.
    await ann.reload()
    await ann.locator('#messages li', { hasText: 'after Bob left' }).waitFor()
  }, 60_000)

  it('shows every validation error the server sends back', async () => {
    await app.service('users').create({ email: 'dee@example.com', password: 'dee-secret' }, {})
    const page = await openPage()
    // Both rules fail at once: each field's message on its own line.
    await signIn(page, 'not-an-email', 'short', 'Sign up')
    await page.locator('#error li').nth(1).waitFor()
    await expect(page.locator('#error li').allTextContents()).resolves.toEqual([
      "'email' must be a valid email address",
      "'password' must have at least 8 characters"
    ])
    // The same email in other letters is taken (409).
    await signIn(page, 'DEE@example.com', 'another-secret', 'Sign up')
    await page.locator('#error li', { hasText: 'email already registered' }).waitFor()
    // A login by email ignores case.
    await signIn(page, 'Dee@Example.COM', 'dee-secret', 'Log in')
    await page.locator('#chat').waitFor()
    await page.fill('#text', '    ')
    await page.press('#text', 'Enter')
    await page.locator('#error li', { hasText: "'text' must have at least 1 character" }).waitFor()
    await page.fill('#text', 'x'.repeat(2001))
    await page.press('#text', 'Enter')
    await page.locator('#error li', { hasText: "'text' must have at most 2000 characters" }).waitFor()
    await mkdir(join(root, 'test-artifacts'), { recursive: true })
    await page.screenshot({ path: join(root, 'test-artifacts', 'chat-validation.png'), fullPage: true })
    expect(pageErrors).toEqual([])
  }, 60_000)

  it('resumes after a dropped connection: what was posted meanwhile appears once, the list is not reloaded', async () => {
    // The page reaches the server through a proxy the test cuts, as a network failure would.
    const proxy = await startTcpProxy('127.0.0.1', Number(new URL(server.url).port))
    try {
      const page = await openPage(`http://127.0.0.1:${proxy.port}`)
      await signIn(page, 'eve@example.com', 'eve-secret', 'Sign up')
      await page.locator('#chat').waitFor()
      await page.fill('#text', 'before the cut')
      await page.press('#text', 'Enter')
      await page.locator('#messages li', { hasText: 'before the cut' }).waitFor()
      // A reload would replace this element.
      await page
        .locator('#messages li', { hasText: 'before the cut' })
        .evaluate((item) => item.setAttribute('data-kept', ''))

      await proxy.cut()
      await page.locator('#offline').waitFor()
      const eveId = ((await app.service('users').find({ query: { email: 'eve@example.com' } })) as Paginated<Data>)
        .data[0]!.id
      // A millisecond apart at least: the page lists by createdAt, and a tie would be ordered by id.
      for (const text of ['missed 1', 'missed 2']) {
        await app.service('messages').create({ text, userId: eveId }, {})
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      await proxy.restore()

      await page.locator('#offline').waitFor({ state: 'hidden' })
      await page.locator('#messages li', { hasText: 'missed 2' }).waitFor()
      const texts = await page.locator('#messages li span').allTextContents()
      expect(texts.slice(texts.indexOf('before the cut'))).toEqual(['before the cut', 'missed 1', 'missed 2'])
      expect(await page.locator('#messages li[data-kept]').count()).toBe(1)
      expect(pageErrors).toEqual([])
    } finally {
      await proxy.close()
    }
  }, 60_000)

  it('falls back to find and events when live queries are off on the server', async () => {
    const plain = await startChat({ LIVE_QUERIES: 'false' })
    try {
      const page = await openPage(plain.server.url)
      await signIn(page, 'fay@example.com', 'fay-secret', 'Sign up')
      await page.locator('#chat').waitFor()
      await page.locator('#empty').waitFor()
      // The page asked for a live query; the server refused it, and the page found the messages instead.
      expect(watchesMessages(page)).toBe(true)
      expect(framesSent.get(page)!.some((frame) => /^42\d*\["find","messages",/.test(frame))).toBe(true)
      const fayId = (
        (await plain.app.service('users').find({ query: { email: 'fay@example.com' } })) as Paginated<Data>
      ).data[0]!.id
      const other = (await plain.app.service('messages').create({ text: 'from elsewhere', userId: fayId }, {})) as Data
      await page.locator('#messages li', { hasText: 'from elsewhere' }).waitFor()
      await page.fill('#text', 'my own')
      await page.press('#text', 'Enter')
      await page.locator('#messages li', { hasText: 'my own' }).waitFor()
      await plain.app.service('messages').remove(other.id as string, {})
      await page.locator('#messages li', { hasText: 'from elsewhere' }).waitFor({ state: 'detached' })
      await expect(page.locator('#messages li span').allTextContents()).resolves.toEqual(['my own'])
      expect(await page.locator('#empty').isHidden()).toBe(true)
      expect(pageErrors).toEqual([])
    } finally {
      plain.socketIo.disconnectAll()
      await plain.server.close()
      await plain.app.teardown()
    }
  }, 60_000)

  it('tells the person when the server goes away', async () => {
    const page = await openPage()
    await signIn(page, 'cy@example.com', 'cy-secret', 'Sign up')
    await page.locator('#chat').waitFor()
    socketIo.disconnectAll()
    await server.close()
    await page.locator('#offline').waitFor()
    await expect(page.locator('#offline').textContent()).resolves.toContain('Lost the connection')
    expect(pageErrors).toEqual([])
  })
})
