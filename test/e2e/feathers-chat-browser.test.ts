import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createHash } from 'node:crypto'
import { copyFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { ENGINES } from '../interfaces/http/http-test-server.js'
import { AUTH_SECRET, startAuthServer, type AuthServer } from '../support/auth-server.js'
import { CHROMIUM, withChromium } from '../support/chromium.js'

/*
 * A Feathers chat frontend against the reference app, in headless Debian Chromium: the page of
 * test/fixtures/feathers-chat, which does what the feathers-chat v5 frontend does with the official
 * browser client (@feathersjs/client's dist/feathers.js) and the socket.io client the server serves.
 * Two people in two browser contexts: one writes, the other sees it live with the writer's email and
 * Gravatar; a reload keeps the login, logout ends it. Messages carry their `user` and users their
 * `avatar` through the services' resolvers.
 */
const root = process.cwd()
const fixture = join(root, 'test', 'fixtures', 'feathers-chat')

/** The avatar feathers-chat gives a user without one: the Gravatar of the lower-cased email, 60 px. */
const gravatar = (email: string) =>
  `https://s.gravatar.com/avatar/${createHash('md5').update(email.toLowerCase()).digest('hex')}?s=60`

let browser: Browser
let staticDir: string

beforeAll(async () => {
  staticDir = await mkdtemp(join(tmpdir(), 'plumage-feathers-chat-'))
  for (const file of ['index.html', 'client.js']) await copyFile(join(fixture, file), join(staticDir, file))
  await copyFile(join(root, 'node_modules/@feathersjs/client/dist/feathers.js'), join(staticDir, 'feathers.js'))
})
afterAll(async () => {
  await browser?.close()
  if (staticDir) await rm(staticDir, { recursive: true, force: true })
})

withChromium('the feathers-chat frontend in Chromium', () => {
  beforeAll(async () => {
    const { chromium } = await import('playwright-core')
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu']
    })
  }, 60_000)

  describe.each(ENGINES)('on %s', (engine) => {
    let server: AuthServer
    const contexts: BrowserContext[] = []
    /** Uncaught errors of any page: the frontend must never throw. */
    const pageErrors: Error[] = []
    beforeAll(async () => {
      server = await startAuthServer({ AUTH_SECRET, BCRYPT_ROUNDS: '4', HTTP: engine, STATIC_DIR: staticDir })
    })
    afterAll(async () => {
      for (const context of contexts) await context.close()
      await server.close()
    })

    /** A person's own browser (own localStorage) with the chat open; avatars are not fetched (no network here). */
    async function person(): Promise<Page> {
      const context = await browser.newContext()
      contexts.push(context)
      await context.route('https://s.gravatar.com/**', (route) => route.abort())
      const page = await context.newPage()
      page.on('pageerror', (error) => pageErrors.push(error))
      await page.goto(`${server.url}/index.html`)
      return page
    }

    async function signUp(page: Page, email: string): Promise<void> {
      await page.locator('#login-form').waitFor()
      await page.fill('[name="email"]', email)
      await page.fill('[name="password"]', `${email}-secret`)
      await page.click('#signup')
      await page.locator('#chat').waitFor({ state: 'attached' })
    }

    /** The users list's entries as the page shows them: email and avatar. */
    const usersShown = (page: Page) =>
      page.$$eval('.user-list li', (items) =>
        items.map((item) => ({
          email: item.querySelector('span')!.textContent,
          avatar: item.querySelector('img')!.getAttribute('src')
        }))
      )
    /** The messages as the page shows them: sender, avatar and text. */
    const messagesShown = (page: Page) =>
      page.$$eval('.message', (items) =>
        items.map((item) => ({
          sender: item.querySelector('.sender')!.textContent,
          avatar: item.querySelector('img')!.getAttribute('src'),
          text: item.querySelector('.text')!.textContent
        }))
      )

    it('delivers a message live with its sender and avatar, keeps the login on reload and logs out', async () => {
      const [ann, bob] = [`ann-${engine}@example.com`, `bob-${engine}@example.com`]
      const annPage = await person()
      await signUp(annPage, ann)
      const bobPage = await person()
      await signUp(bobPage, bob)

      // Bob finds Ann among the users; Ann sees Bob arrive live (`users created`), both with their Gravatar.
      await bobPage.waitForFunction((n) => document.querySelectorAll('.user-list li').length === n, 2)
      expect(await usersShown(bobPage)).toEqual([
        { email: ann, avatar: gravatar(ann) },
        { email: bob, avatar: gravatar(bob) }
      ])
      await annPage.waitForFunction(() => document.querySelectorAll('.user-list li').length === 2)
      expect((await usersShown(annPage))[1]).toEqual({ email: bob, avatar: gravatar(bob) })

      // Ann writes; Bob sees it live (`messages created`) with Ann's email and avatar (message.user).
      await annPage.fill('[name="text"]', 'Hello from Ann')
      await annPage.click('#send-message button')
      await bobPage.locator('.message').waitFor()
      expect(await messagesShown(bobPage)).toEqual([{ sender: ann, avatar: gravatar(ann), text: 'Hello from Ann' }])

      // A reload logs in again from the stored token and shows the history (find, newest 25) the same way.
      await bobPage.reload()
      await bobPage.locator('#chat .message').waitFor()
      expect(await messagesShown(bobPage)).toEqual([{ sender: ann, avatar: gravatar(ann), text: 'Hello from Ann' }])

      // Logout: back to the form, and a reload does not log in again.
      await bobPage.click('#logout')
      await bobPage.locator('#login-form').waitFor()
      await bobPage.reload()
      await bobPage.locator('#login-form').waitFor()
      expect(await bobPage.locator('#chat').count()).toBe(0)
      expect(pageErrors).toEqual([])
    }, 60_000)
  })
})
