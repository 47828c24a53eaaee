import { execFile } from 'node:child_process'
import { copyFile, mkdtemp, readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { Browser, BrowserContextOptions, Page } from 'playwright-core'
import { CHROMIUM } from '../support/chromium.js'

/*
 * The chat page in headless Debian Chromium (never a downloaded browser), for the suites that drive
 * it against the built server: the page's files in a folder of their own (public/ with app.js built
 * by scripts/build-client.mjs), and a browser.
 */
export { chromiumAvailable, withChromium } from '../support/chromium.js'

const root = process.cwd()

/** A folder with public/'s files and a freshly built app.js, for STATIC_DIR. */
export async function buildChatPage(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'plumage-chat-'))
  await promisify(execFile)(process.execPath, [join(root, 'scripts', 'build-client.mjs'), dir])
  for (const file of await readdir(join(root, 'public'))) {
    if (file !== 'app.js') await copyFile(join(root, 'public', file), join(dir, file))
  }
  return dir
}

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core')
  return chromium.launch({
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
}

const AVATAR_STAND_IN =
  '<svg xmlns="http://www.w3.org/2000/svg" width="60" height="60"><circle cx="30" cy="30" r="30"/></svg>'

export interface WatchedPage {
  page: Page
  /** Uncaught errors, console errors and failed responses (status 400 and above) of the page. */
  problems: string[]
  /** The socket.io frames the page sent (a live query is a `watch` event). */
  sent: string[]
}

/** A page in a context of its own (its own localStorage), with everything that goes wrong recorded. */
export async function openPage(
  browser: Browser,
  url: string,
  options: BrowserContextOptions = {}
): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: { width: 800, height: 640 }, ...options })
  // Avatars are Gravatar URLs; tests run without the internet, so Gravatar's host answers with a stand-in picture.
  await context.route('https://s.gravatar.com/**', (route) =>
    route.fulfill({ contentType: 'image/svg+xml', body: AVATAR_STAND_IN })
  )
  const page = await context.newPage()
  const problems: string[] = []
  const sent: string[] = []
  page.on('websocket', (socket) => socket.on('framesent', ({ payload }) => sent.push(String(payload))))
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`)
  })
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`)
  })
  await page.goto(url)
  await page.locator('#login').waitFor()
  return { page, problems, sent }
}

export async function signIn(
  page: Page,
  button: 'Log in' | 'Sign up',
  email: string,
  password: string,
  name = ''
): Promise<void> {
  await page.fill('#email', email)
  await page.fill('#password', password)
  await page.fill('#name', name)
  await page.getByRole('button', { name: button, exact: true }).click()
}

export async function post(page: Page, text: string): Promise<void> {
  await page.fill('#text', text)
  await page.press('#text', 'Enter')
  await page.locator('#messages li', { hasText: text }).waitFor()
}
