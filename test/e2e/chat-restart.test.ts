import { afterAll, beforeAll, expect, it } from '@jest/globals'
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js'
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
 * The chat page survives a restart of the server under it (the built server, stopped with SIGTERM
 * as a terminal's Ctrl-C or a deploy does, and started again on the same port with the same
 * AUTH_SECRET). Shutdown closes the sockets' transports, so the page's socket reconnects by itself;
 * the restarted server cannot resume its session (its event history started again), so the client
 * says events-lost and the page logs in again and reloads. With the memory store the restarted
 * server has forgotten every user, so:
 *   - when the same user exists again (signed up again before the page is back: the first user of
 *     an empty store gets the same id), the restart is invisible: the page logs in again with its
 *     token, shows what it missed, posts and receives;
 *   - when the user is gone, the page says the session expired and shows the login form.
 */

const root = process.cwd()
const AUTH_SECRET = 'chat-restart-secret-0123456789'
/** Chromium's own log lines for a refused connection (the socket's reconnection attempts during the cut). */
const OUTAGE =
  /^console: (WebSocket connection to '[^']+' failed: .*|Failed to load resource: )net::ERR_CONNECTION_REFUSED$/
let built: BuiltServer
let staticDir: string
let browser: Browser
let env: Record<string, string>
const proxies: TcpProxy[] = []

beforeAll(async () => {
  if (!chromiumAvailable) return
  built = await buildServer('chat-restart')
  staticDir = await buildChatPage()
  env = { AUTH_SECRET, BCRYPT_ROUNDS: '4', LOGIN_MAX_FAILURES: '0', STATIC_DIR: staticDir }
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  for (const proxy of proxies) await proxy.close()
  await built?.cleanup()
  if (staticDir) await rm(staticDir, { recursive: true, force: true })
})

/** Stops a server as Ctrl-C or a deploy does (SIGTERM: graceful shutdown, sockets told to disconnect). */
async function stop(server: StartedServer): Promise<void> {
  server.child.kill('SIGTERM')
  expect(await server.exited).toBe(0)
}

async function rest(port: number, path: string, body: unknown, token?: string): Promise<Record<string, unknown>> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body)
  })
  const answer = (await response.json()) as Record<string, unknown>
  if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(answer)}`)
  return answer
}

async function login(port: number, email: string, password: string): Promise<string> {
  return (await rest(port, '/authentication', { strategy: 'local', email, password })).accessToken as string
}

withChromium('the chat page across a server restart', () => {
  it('logs in again by itself, shows what it missed, posts and receives when its user is still known', async () => {
    const first = await built.start(env)
    // The page reaches the server through a proxy, so the test decides when it can get back.
    const proxy = await startTcpProxy('127.0.0.1', first.port)
    proxies.push(proxy)
    const { page, problems, sent } = await openPage(browser, `http://127.0.0.1:${proxy.port}`)
    const watches = () => sent.filter((frame) => /^42\d*\["watch","messages",/.test(frame)).length
    await signIn(page, 'Sign up', 'ann@example.com', 'ann-secret', 'Ann')
    await page.locator('#chat').waitFor()
    await post(page, 'before the restart')
    const watchedBefore = watches()
    expect(watchedBefore).toBeGreaterThan(0)

    await stop(first)
    await page.locator('#offline').waitFor()
    await proxy.cut()
    const second = await built.start({ ...env, PORT: String(first.port) })
    // Ann again (the first user of the empty store: the same id as in her token), and a message
    // posted while the page was away.
    expect(
      await rest(second.port, '/users', { email: 'ann@example.com', password: 'ann-secret', name: 'Ann' })
    ).toMatchObject({ id: 0 })
    await rest(
      second.port,
      '/messages',
      { text: 'while you were away' },
      await login(second.port, 'ann@example.com', 'ann-secret')
    )
    await proxy.restore()

    await page.locator('#messages li', { hasText: 'while you were away' }).waitFor({ timeout: 20_000 })
    await page.locator('#offline').waitFor({ state: 'hidden' })
    expect(await page.locator('#chat').isVisible()).toBe(true)
    await expect(page.locator('#status').textContent()).resolves.toBe('Signed in as Ann')
    // The list is the server's: the message from before the restart went with the memory store.
    await expect(page.locator('#messages li span').allTextContents()).resolves.toEqual(['while you were away'])

    await post(page, 'after the restart')
    expect(await page.locator('#error').isHidden()).toBe(true)
    // Live events reach the page again: its socket is logged in on the new server.
    await rest(second.port, '/users', { email: 'bob@example.com', password: 'bob-secret' })
    const bobToken = await login(second.port, 'bob@example.com', 'bob-secret')
    const welcome = await rest(second.port, '/messages', { text: 'welcome back, Ann' }, bobToken)
    const fromBob = page.locator('#messages li', { hasText: 'welcome back, Ann' })
    await fromBob.waitFor()
    // The author's name is filled in once it is looked up (a placeholder shows until then).
    await fromBob.locator('strong', { hasText: 'bob@example.com' }).waitFor()
    await expect(fromBob.locator('strong').textContent()).resolves.toBe('bob@example.com')
    // The live query resumed on the new server (watched there again): a removal takes the message off the page.
    expect(watches()).toBeGreaterThan(watchedBefore)
    const removed = await fetch(`http://127.0.0.1:${second.port}/messages/${String(welcome.id)}`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${bobToken}` }
    })
    expect(removed.status).toBe(200)
    await fromBob.waitFor({ state: 'detached' })
    await expect(page.locator('#messages li span').allTextContents()).resolves.toEqual([
      'while you were away',
      'after the restart'
    ])

    await mkdir(join(root, 'test-artifacts'), { recursive: true })
    await page.screenshot({ path: join(root, 'test-artifacts', 'chat-after-restart.png'), fullPage: true })
    // While the proxy refuses connections Chromium itself logs each failed reconnection attempt: that is
    // the outage the test made, not a problem of the page. Anything else is.
    expect(problems.filter((problem) => !OUTAGE.test(problem))).toEqual([])
    await stop(second)
  }, 90_000)

  it('says the session expired and shows the login form when the restarted server does not know the user', async () => {
    const first = await built.start(env)
    const { page, problems } = await openPage(browser, `http://127.0.0.1:${first.port}`)
    await signIn(page, 'Sign up', 'cy@example.com', 'cy-secret-pw')
    await page.locator('#chat').waitFor()
    await post(page, 'hello before the restart')

    await stop(first)
    await page.locator('#offline').waitFor()
    const second = await built.start({ ...env, PORT: String(first.port) })

    await page.locator('#error', { hasText: 'Your session expired, please log in again.' }).waitFor({ timeout: 20_000 })
    await page.locator('#login').waitFor()
    expect(await page.locator('#chat').isHidden()).toBe(true)
    expect(await page.locator('#logout').isHidden()).toBe(true)
    expect(await page.locator('#offline').isHidden()).toBe(true)
    await mkdir(join(root, 'test-artifacts'), { recursive: true })
    await page.screenshot({ path: join(root, 'test-artifacts', 'chat-session-expired.png'), fullPage: true })

    // Signing up again on the new server works as on the first visit.
    await signIn(page, 'Sign up', 'cy@example.com', 'cy-secret-pw')
    await page.locator('#chat').waitFor()
    await post(page, 'hello after the restart')
    // The refused token, and its refresh, answer 401 over the socket: nothing failed over HTTP.
    // While the proxy refuses connections Chromium itself logs each failed reconnection attempt: that is
    // the outage the test made, not a problem of the page. Anything else is.
    expect(problems.filter((problem) => !OUTAGE.test(problem))).toEqual([])
    await stop(second)
  }, 90_000)
})
