import { afterAll, beforeAll, expect, it } from '@jest/globals'
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { buildServer, type BuiltServer, type StartedServer } from '../support/built-server.js'
import {
  buildChatPage,
  chromiumAvailable,
  launchChromium,
  openPage,
  post,
  signIn,
  withChromium
} from './chat-support.js'

/*
 * The chat page's details, in headless Chromium against the built server: it fits a 375 px phone
 * (the "Log out" button fully visible), has a favicon (nothing fails to load), says so when there are
 * no messages, dates messages older than today (today's show the time only), and shows the names
 * people chose instead of their emails.
 */

const root = process.cwd()
let built: BuiltServer
let server: StartedServer
let url: string
let staticDir: string
let browser: Browser

beforeAll(async () => {
  if (!chromiumAvailable) return
  built = await buildServer('chat-page')
  staticDir = await buildChatPage()
  server = await built.start({
    AUTH_SECRET: 'chat-page-secret-0123456789',
    BCRYPT_ROUNDS: '4',
    LOGIN_MAX_FAILURES: '0',
    STATIC_DIR: staticDir
  })
  url = `http://127.0.0.1:${server.port}`
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await built?.cleanup()
  if (staticDir) await rm(staticDir, { recursive: true, force: true })
})

async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(join(root, 'test-artifacts'), { recursive: true })
  await page.screenshot({ path: join(root, 'test-artifacts', name), fullPage: true })
}

/** Whether the element lies entirely inside the viewport's width (not cut off, not scrolled away sideways). */
async function fullyVisible(page: Page, selector: string): Promise<boolean> {
  const box = await page.locator(selector).boundingBox()
  const width = page.viewportSize()!.width
  return box !== null && box.width > 0 && box.x >= 0 && box.x + box.width <= width
}

withChromium('the chat page in Chromium', () => {
  it('fits a 375 px wide phone, with a favicon and a line saying there are no messages yet', async () => {
    const { page, problems } = await openPage(browser, url, {
      viewport: { width: 375, height: 740 },
      isMobile: true,
      hasTouch: true
    })
    const icon = await page.locator('link[rel="icon"]').getAttribute('href')
    const favicon = await fetch(new URL(icon!, `${url}/`))
    expect([favicon.status, favicon.headers.get('content-type')]).toEqual([
      200,
      expect.stringContaining('image/svg+xml')
    ])

    await signIn(page, 'Sign up', 'somebody.with.a.long.address@example.com', 'a-secret-pw')
    await page.locator('#chat').waitFor()
    await expect(page.locator('#empty').textContent()).resolves.toBe('No messages yet. Say hello!')
    expect(await page.locator('#empty').isVisible()).toBe(true)

    for (const selector of ['#logout', '#text', 'button:text("Send")', '#status']) {
      expect(`${selector}: ${await fullyVisible(page, selector)}`).toBe(`${selector}: true`)
    }
    // Nothing sticks out sideways.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375)
    await screenshot(page, 'chat-375px.png')

    await post(page, 'the first message')
    expect(await page.locator('#empty').isHidden()).toBe(true)
    await page.click('#logout')
    await page.locator('#login').waitFor()
    expect(problems).toEqual([])
  }, 60_000)

  it('shows the names people chose, and the email of those who chose none', async () => {
    const ann = await openPage(browser, url)
    await signIn(ann.page, 'Sign up', 'ann@example.com', 'ann-secret', '  Ann Example ')
    await ann.page.locator('#chat').waitFor()
    await expect(ann.page.locator('#status').textContent()).resolves.toBe('Signed in as Ann Example')
    const bob = await openPage(browser, url)
    await signIn(bob.page, 'Sign up', 'bob@example.com', 'bob-secret')
    await bob.page.locator('#chat').waitFor()
    await expect(bob.page.locator('#status').textContent()).resolves.toBe('Signed in as bob@example.com')

    await post(ann.page, 'Hello from Ann')
    const atBob = bob.page.locator('#messages li', { hasText: 'Hello from Ann' })
    await atBob.waitFor()
    // The author's name is filled in once it is looked up (a placeholder shows until then).
    await atBob.locator('strong', { hasText: 'Ann Example' }).waitFor()
    await expect(atBob.locator('strong').textContent()).resolves.toBe('Ann Example')
    await post(bob.page, 'Hi from Bob')
    const atAnn = ann.page.locator('#messages li', { hasText: 'Hi from Bob' })
    await atAnn.waitFor()
    // The author's name is filled in once it is looked up (a placeholder shows until then).
    await atAnn.locator('strong', { hasText: 'bob@example.com' }).waitFor()
    await expect(atAnn.locator('strong').textContent()).resolves.toBe('bob@example.com')
    // A page opened later looks the names up too.
    await ann.page.reload()
    const reloaded = ann.page.locator('#messages li', { hasText: 'Hello from Ann' })
    await reloaded.waitFor()
    // The author's name is filled in once it is looked up (a placeholder shows until then).
    await reloaded.locator('strong', { hasText: 'Ann Example' }).waitFor()
    await expect(reloaded.locator('strong').textContent()).resolves.toBe('Ann Example')
    await screenshot(ann.page, 'chat-names.png')
    expect([...ann.problems, ...bob.problems]).toEqual([])
  }, 60_000)

  it('dates messages older than today, with the year when it is not this one, and shows only the time for today', async () => {
    const { page, problems } = await openPage(browser, url, { locale: 'en-GB', timezoneId: 'UTC' })
    await signIn(page, 'Sign up', 'dee@example.com', 'dee-secret')
    await page.locator('#chat').waitFor()
    await post(page, 'posted today')
    const time = page.locator('#messages li', { hasText: 'posted today' }).locator('time')
    const createdAt = new Date((await time.getAttribute('datetime'))!)
    const clock = createdAt.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', timeZone: 'UTC' })
    await expect(time.textContent()).resolves.toBe(clock)

    // The same messages seen three days later, then a year later (the page's clock moves; the server's does not).
    for (const [days, options] of [
      [3, {}],
      [400, { year: 'numeric' }]
    ] as const) {
      const later = new Date(createdAt.getTime() + days * 86_400_000)
      await page.clock.setFixedTime(later)
      await page.reload()
      const date = createdAt.toLocaleDateString('en-GB', {
        day: 'numeric',
        month: 'short',
        timeZone: 'UTC',
        ...options
      })
      const sameYear = later.getUTCFullYear() === createdAt.getUTCFullYear()
      const expected =
        days === 3 && !sameYear
          ? `${createdAt.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' })}, ${clock}`
          : `${date}, ${clock}`
      await expect(
        page.locator('#messages li', { hasText: 'posted today' }).locator('time').textContent()
      ).resolves.toBe(expected)
    }
    await screenshot(page, 'chat-dates.png')
    expect(problems).toEqual([])
  }, 60_000)
})
