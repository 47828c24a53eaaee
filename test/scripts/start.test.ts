import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { freePort } from '../support/free-port.js'
import { cleanEnv, copyCheckout, type CheckoutCopy } from './checkout-copy.js'

/*
 * The README's first commands stay first and true: on a copy of the checkout without any build
 * output, `npm start` runs the real `npm run build` (type check and both bundles), reads .env, and
 * serves the chat.
 */
let copy: CheckoutCopy

beforeAll(async () => {
  copy = await copyCheckout()
}, 60_000)
afterAll(() => copy?.remove())

describe('the README quick start', () => {
  it('opens with `npm install && npm start`, then `npm test`', () => {
    const readme = readFileSync('README.md', 'utf8')
    const first = /```bash\n([\s\S]*?)\n```/.exec(readme)![1]!
    expect(first.split('\n').map((line) => line.replace(/\s+#.*$/, ''))).toEqual([
      'npm install && npm start',
      'npm test'
    ])
  })

  it('builds a fresh checkout with npm start, reads .env and serves the chat', async () => {
    expect(existsSync(join(copy.dir, 'dist'))).toBe(false)
    const port = await freePort()
    await writeFile(join(copy.dir, '.env'), `PORT=${port}\nNODE_ENV=test\nAUTH_SECRET=quick-start-secret-0123456789\n`)
    // Its own process group, so that npm and the server it runs stop together.
    const child = spawn('npm', ['start'], {
      cwd: copy.dir,
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true
    })
    let stderr = ''
    child.stderr.on('data', (chunk) => {
      stderr += String(chunk)
    })
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let stdout = ''
        child.stdout.on('data', (chunk) => {
          stdout += String(chunk)
          const started = /"url":"([^"]+)".*"msg":"plumage started"/.exec(stdout)
          if (started) resolve(started[1]!)
        })
        child.once('exit', (code) => reject(new Error(`npm start exited (${code}):\n${stdout}\n${stderr}`)))
      })
      expect(url).toBe(`http://127.0.0.1:${port}`)
      expect(stderr).toContain('built dist/plumage.mjs, public/app.js')
      expect(stderr).not.toContain('AUTH_SECRET is not set')
      const home = await fetch(`${url}/`)
      expect(await home.text()).toContain('<title>plumage chat</title>')
      expect((await fetch(`${url}/app.js`)).status).toBe(200)
      expect(existsSync(join(copy.dir, 'dist', '.build-stamp'))).toBe(true)
    } finally {
      process.kill(-child.pid!, 'SIGTERM')
    }
  }, 180_000)
})
