import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { extname, join, normalize } from 'node:path'
import { promisify } from 'node:util'
import type { Browser, Page } from 'playwright-core'
import { CHROMIUM, withChromium } from '../support/chromium.js'

/*
 * The documentation site as a reader gets it: `npm run docs:build` (TypeDoc, then VitePress, whose dead-link
 * check fails the build) must succeed, and the built site, served over HTTP, opens in headless Chromium page by
 * page — no console error, no failed request, every link to a page and heading of the site that exists, every
 * image loaded — and fits a 375 px phone without scrolling sideways. Screenshots of the home page, the
 * tutorial's first page and a reference page at 1280 and 375 px go to test-artifacts/docs-site/.
 */
const DIST = 'docs/.vitepress/dist'
const SHOTS = 'test-artifacts/docs-site'
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json'
}

/** The built pages, as site paths (`/tutorial/index.html`); 404.html is VitePress's own. */
function builtPages(): string[] {
  return readdirSync(DIST, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.html') && name !== '404.html')
    .map((name) => `/${name}`)
    .sort()
}

/** A static server of the built site on 127.0.0.1, as `vitepress preview` would serve it. */
async function serve(): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    const path = normalize(decodeURIComponent(new URL(request.url!, 'http://site').pathname))
    const file = join(DIST, path.endsWith('/') ? `${path}index.html` : path)
    if (!file.startsWith(DIST) || !existsSync(file)) return response.writeHead(404).end('not found')
    response.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' })
    response.end(readFileSync(file))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

/** What is wrong with a link of the site: a page that was not built, or a heading that page does not have. */
function brokenLink(href: string): string | undefined {
  const url = new URL(href)
  const path = url.pathname.endsWith('/') ? `${url.pathname}index.html` : url.pathname
  const file = join(DIST, decodeURIComponent(path))
  if (!existsSync(file)) return `${href}: no such page`
  const id = decodeURIComponent(url.hash.slice(1))
  if (id !== '' && path.endsWith('.html') && !readFileSync(file, 'utf8').includes(`id="${id}"`))
    return `${href}: no heading #${id}`
  return undefined
}

describe('the documentation site', () => {
  beforeAll(async () => {
    await promisify(execFile)('npm', ['run', '--silent', 'docs:build'], { maxBuffer: 64 * 1024 * 1024 })
  }, 600_000)

  it('builds every page: the tutorial, the guides, the reference with its API pages, the explanations', () => {
    const pages = builtPages()
    for (const page of ['/index.html', '/tutorial/index.html', '/reference/configuration.html', '/adr/README.html'])
      expect(pages).toContain(page)
    expect(pages.filter((page) => page.startsWith('/reference/api/')).length).toBeGreaterThan(50)
  })

  withChromium('in a browser', () => {
    let browser: Browser
    let site: { server: Server; url: string }
    beforeAll(async () => {
      site = await serve()
      const { chromium } = await import('playwright-core')
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run']
      })
      mkdirSync(SHOTS, { recursive: true })
    }, 60_000)
    afterAll(async () => {
      await browser?.close()
      site?.server.close()
    })

    /** Opens a page and reports what went wrong on it: console errors, failed requests, broken links and images. */
    async function visit(page: Page, path: string): Promise<string[]> {
      const problems: string[] = []
      page.removeAllListeners()
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(`console: ${message.text()}`)
      })
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
      // Prefetches of linked pages that the next navigation cuts short are aborted, not failed.
      page.on('requestfailed', (request) => {
        if (request.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`request failed: ${request.url()}`)
      })
      page.on('response', (response) => {
        if (response.status() >= 400) problems.push(`${response.status()}: ${response.url()}`)
      })
      await page.goto(`${site.url}${path}`, { waitUntil: 'load' })
      const { links, brokenImages } = await page.evaluate(() => ({
        links: [...document.querySelectorAll('a[href]')].map((a) => (a as HTMLAnchorElement).href),
        brokenImages: [...document.images]
          .filter((image) => !image.complete || image.naturalWidth === 0)
          .map((i) => i.src)
      }))
      for (const href of links.filter((link) => link.startsWith(site.url))) {
        const broken = brokenLink(href.replace(site.url, 'http://site'))
        if (broken) problems.push(`link ${broken}`)
      }
      for (const image of brokenImages) problems.push(`image not loaded: ${image}`)
      return problems.map((problem) => `${path} ${problem}`)
    }

    it('opens every page with no console error, no failed request, no broken link or image', async () => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
      const problems: string[] = []
      for (const path of builtPages()) problems.push(...(await visit(page, path)))
      await page.close()
      expect(problems).toEqual([])
    }, 900_000)

    it('fits a 375 px phone on every written page (only the API pages are generated)', async () => {
      const page = await browser.newPage({ viewport: { width: 375, height: 800 } })
      const overflowing: string[] = []
      for (const path of builtPages().filter((path) => !path.startsWith('/reference/api/'))) {
        await page.goto(`${site.url}${path}`, { waitUntil: 'load' })
        const width = await page.evaluate(() => document.documentElement.scrollWidth)
        if (width > 375) overflowing.push(`${path}: ${width} px`)
      }
      await page.close()
      expect(overflowing).toEqual([])
    }, 600_000)

    it.each([
      ['home', '/index.html'],
      ['tutorial', '/tutorial/index.html'],
      ['reference', '/reference/configuration.html']
    ])(
      'takes screenshots of the %s page at 1280 and 375 px',
      async (name, path) => {
        for (const width of [1280, 375]) {
          const page = await browser.newPage({ viewport: { width, height: 900 } })
          expect(await visit(page, path)).toEqual([])
          await page.screenshot({ path: `${SHOTS}/${name}-${width}.png` })
          expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width)
          await page.close()
        }
      },
      60_000
    )
  })
})
