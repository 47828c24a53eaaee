import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { spawn } from 'node:child_process'
import { rm } from 'node:fs/promises'
import { buildMain } from '../../support/built-server.js'

/*
 * The built server refuses to start on a bad setting: exit code 1 and exactly one line on stderr
 * that names the variable, before it listens or logs anything.
 */
let built: { main: string; outDir: string }

beforeAll(async () => {
  built = await buildMain('config')
}, 60_000)
afterAll(() => rm(built.outDir, { recursive: true, force: true }))

function start(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // PORT 0 so that a start that wrongly succeeds cannot collide with anything; killed below if it does.
  const child = spawn(process.execPath, [built.main], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', NODE_ENV: 'test', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => {
    stdout += String(chunk)
    if (stdout.includes('plumage started')) child.kill('SIGKILL')
  })
  child.stderr.on('data', (chunk) => {
    stderr += String(chunk)
  })
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })))
}

describe('starting with a bad setting', () => {
  it.each([
    [{ PORT: 'eighty' }, "plumage failed to start: PORT must be an integer from 0 to 65535 (got 'eighty')"],
    [{ STORE: 'mongodb' }, "plumage failed to start: STORE must be one of memory, rethinkdb, postgres (got 'mongodb')"],
    [{ NODE_ENV: 'production' }, 'plumage failed to start: AUTH_SECRET must be set when NODE_ENV=production'],
    [
      { LOG_LEVEL: 'loud' },
      "plumage failed to start: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got 'loud')"
    ]
  ])('%j exits 1 with one line naming the variable', async (env, line) => {
    const { code, stdout, stderr } = await start(env)
    expect(code).toBe(1)
    expect(stderr).toBe(`${line}\n`)
    expect(stdout).toBe('')
  })
})
