import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { execFile, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'

/*
 * The built server refuses to start on a bad setting: exit code 1 and exactly one line on stderr
 * that names the variable, before it listens or logs anything. Compiled into node_modules/.cache
 * so the compiled files resolve the project's packages and no other run's dist/ is touched.
 */
const root = process.cwd()
const outDir = join(root, 'node_modules', '.cache', `plumage-config-${process.pid}`)

beforeAll(async () => {
  // tsc still emits when files other engineers are editing fail to type-check; only main.js matters.
  await new Promise((resolve) => execFile('npx', ['tsc', '-p', 'tsconfig.build.json', '--outDir', outDir], { cwd: root }, resolve))
  if (!existsSync(join(outDir, 'src', 'main.js'))) throw new Error(`tsc did not emit ${outDir}/src/main.js`)
}, 120_000)
afterAll(() => rm(outDir, { recursive: true, force: true }))

function start(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // PORT 0 so that a start that wrongly succeeds cannot collide with anything; killed below if it does.
  const child = spawn(process.execPath, [join(outDir, 'src', 'main.js')], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', NODE_ENV: 'test', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => {
    stdout += String(chunk)
    if (stdout.includes('plumage started')) child.kill('SIGKILL')
  })
  child.stderr.on('data', (chunk) => { stderr += String(chunk) })
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })))
}

describe('starting with a bad setting', () => {
  it.each([
    [{ PORT: 'eighty' }, "plumage failed to start: PORT must be an integer from 0 to 65535 (got 'eighty')"],
    [{ STORE: 'mongodb' }, "plumage failed to start: STORE must be one of memory, rethinkdb (got 'mongodb')"],
    [{ NODE_ENV: 'production' }, 'plumage failed to start: AUTH_SECRET must be set when NODE_ENV=production'],
    [{ LOG_LEVEL: 'loud' }, "plumage failed to start: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got 'loud')"]
  ])('%j exits 1 with one line naming the variable', async (env, line) => {
    const { code, stdout, stderr } = await start(env)
    expect(code).toBe(1)
    expect(stderr).toBe(`${line}\n`)
    expect(stdout).toBe('')
  })
})
