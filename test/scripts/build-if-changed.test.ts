import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { execFile, spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { readFile, rm, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { cleanEnv, copyCheckout, type CheckoutCopy } from './checkout-copy.js'

/*
 * `npm start` builds only when an input changed: in a copy of the checkout whose `npm run build` is
 * the two bundling steps plus a line in builds.log (the type check is `npm run build`'s business,
 * not this suite's), the build runs when something is touched, added or deleted, and not otherwise;
 * `npm start` of an unchanged checkout serves the build that is there without building. (How fast
 * that start is, is not a test's business on a busy machine: see the cold start row of `npm run bench`.)
 */
const FAKE_BUILD =
  "node scripts/build-server.mjs && node scripts/build-client.mjs && node -e \"require('fs').appendFileSync('builds.log', 'built\\\\n')\""
let copy: CheckoutCopy

beforeAll(async () => {
  copy = await copyCheckout(FAKE_BUILD)
}, 60_000)
afterAll(() => copy?.remove())

const builds = () =>
  existsSync(join(copy.dir, 'builds.log'))
    ? readFileSync(join(copy.dir, 'builds.log'), 'utf8').split('\n').filter(Boolean).length
    : 0

/** `node scripts/build-if-changed.mjs` in the copy: whether it built, and what it said. */
async function buildIfChanged(): Promise<{ built: boolean; stderr: string }> {
  const before = builds()
  const { stderr } = await promisify(execFile)(process.execPath, ['scripts/build-if-changed.mjs'], {
    cwd: copy.dir,
    env: cleanEnv()
  })
  return { built: builds() > before, stderr }
}

/** Moves a file's modification time forward, as saving it in an editor does. */
async function touch(path: string): Promise<void> {
  const later = new Date(Date.now() + 5_000)
  await utimes(join(copy.dir, path), later, later)
}

describe('building only what changed', () => {
  it('builds a fresh checkout, then skips while nothing changes', async () => {
    expect(await buildIfChanged()).toMatchObject({ built: true })
    expect(existsSync(join(copy.dir, 'dist', 'plumage.mjs'))).toBe(true)
    expect(existsSync(join(copy.dir, 'public', 'app.js'))).toBe(true)
    const second = await buildIfChanged()
    expect(second.built).toBe(false)
    expect(second.stderr).toContain('build up to date')
    expect(await buildIfChanged()).toMatchObject({ built: false })
  }, 60_000)

  it.each([
    ['a source file touched', () => touch('src/services/users/users.hooks.ts')],
    ['a page file edited', () => writeFile(join(copy.dir, 'public', 'style.css'), '/* edited */\n', { flag: 'a' })],
    ['a file added', () => writeFile(join(copy.dir, 'src', 'added.ts'), 'export const added = 1\n')],
    ['a file deleted', () => rm(join(copy.dir, 'src', 'added.ts'))],
    ['a build script touched', () => touch('scripts/build-server.mjs')],
    ['package.json touched', () => touch('package.json')],
    ['a tsconfig touched', () => touch('tsconfig.build.json')],
    ['an output deleted', () => rm(join(copy.dir, 'dist', 'plumage.mjs'))],
    ['the stamp deleted', () => rm(join(copy.dir, 'dist', '.build-stamp'))]
  ])(
    'builds again after %s, and only once',
    async (_change, change) => {
      await change()
      expect(await buildIfChanged()).toMatchObject({ built: true })
      expect(await buildIfChanged()).toMatchObject({ built: false })
    },
    60_000
  )

  it('does not count its outputs or files outside the inputs as changes', async () => {
    await touch('public/app.js')
    await writeFile(join(copy.dir, 'notes.txt'), 'not an input\n')
    expect(await buildIfChanged()).toMatchObject({ built: false })
  })

  it("stops with the build's exit code, and builds again next time, when the build fails", async () => {
    const pkgPath = join(copy.dir, 'package.json')
    const pkg = await readFile(pkgPath, 'utf8')
    await writeFile(pkgPath, pkg.replace('"build": "', '"build": "node -e \'process.exit(3)\' && '))
    await expect(buildIfChanged()).rejects.toMatchObject({
      code: 3,
      stderr: expect.stringContaining('npm run build failed (exit code 3)')
    })
    await writeFile(pkgPath, pkg)
    expect(await buildIfChanged()).toMatchObject({ built: true })
  }, 60_000)

  it('starts an unchanged checkout with npm start without building', async () => {
    expect(await buildIfChanged()).toMatchObject({ built: false })
    const before = builds()
    // Its own process group, so that npm and the server it runs stop together.
    const child = spawn('npm', ['start'], {
      cwd: copy.dir,
      env: cleanEnv({ PORT: '0', NODE_ENV: 'test', LOG_LEVEL: 'info' }),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true
    })
    let stderr = ''
    child.stderr.on('data', (chunk) => {
      stderr += String(chunk)
    })
    try {
      await new Promise<void>((resolve, reject) => {
        let stdout = ''
        child.stdout.on('data', (chunk) => {
          stdout += String(chunk)
          if (stdout.includes('"msg":"plumage started"')) resolve()
        })
        child.once('exit', (code) =>
          reject(new Error(`npm start exited (${code}) before the server started:\n${stdout}\n${stderr}`))
        )
      })
      // Started from the build that was there: no build ran, and the start said why.
      expect(builds()).toBe(before)
      expect(stderr).toContain('build up to date')
      expect(stderr).not.toContain('built dist/plumage.mjs')
    } finally {
      process.kill(-child.pid!, 'SIGTERM')
    }
    expect(await buildIfChanged()).toMatchObject({ built: false })
  }, 30_000)
})
