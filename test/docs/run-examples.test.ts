import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { execFile } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { promisify } from 'node:util'
import { startAuthServer, type AuthServer } from '../support/auth-server.js'
import { discoverRethinkDb, type RethinkDbTestServer } from '../support/rethinkdb-server.js'

/*
 * Every example runs on its own: `npm run example -- <name> [arguments]` exits 0 by itself (nothing
 * left open) and prints what it did. Examples that talk to a server get one: a plumage server for
 * the clients, a RethinkDB (when reachable) for the RethinkDB service.
 */
const examples = readdirSync('examples')
  .filter((file) => file.endsWith('.ts'))
  .map((file) => file.slice(0, -3))
  .sort()

let server: AuthServer
let rethinkdb: RethinkDbTestServer | null
beforeAll(async () => {
  server = await startAuthServer()
  rethinkdb = await discoverRethinkDb()
}, 120_000)
afterAll(async () => {
  await server?.close()
  await rethinkdb?.stop()
})

async function example(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env, NODE_OPTIONS: '' }
  try {
    const { stdout, stderr } = await promisify(execFile)('npm', ['run', '--silent', 'example', '--', ...args], {
      env,
      timeout: 60_000
    })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string }
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
  }
}

/** What each example must print, and the arguments it gets (null: nothing to run it against here). */
const runs: Record<string, () => { args: string[]; output: RegExp[] } | null> = {
  'add-a-service': () => ({
    args: [],
    output: [
      /^created \{ title: 'Write the docs', done: false, id: 0 \}$/m,
      /^patched \{ title: 'Write the docs', done: true, id: 0 \}$/m,
      /^updated \{ title: 'Publish the docs', done: false, id: 0 \}$/m,
      /^refused BadRequest: Invalid data: 'title' is required$/m,
      /^refused BadRequest: Invalid data: 'done' must be boolean$/m,
      /^found \{\n {2}total: 1,/m
    ]
  }),
  'add-a-transport': () => ({
    args: [],
    output: [/^answer .*"result":\{.*"text":"Hello over ndjson"/m, /^event .*"event":"created"/m]
  }),
  'rethinkdb-service': () =>
    rethinkdb
      ? {
          args: [`rethinkdb://${rethinkdb.host}:${rethinkdb.port}/${rethinkdb.db}`],
          output: [/^created \[/m, /^found \(unread only\) \{[\s\S]*text: 'still unread'/m]
        }
      : null,
  'use-the-clients': () => ({
    args: [server.url],
    output: [
      /^fetch: signed up and logged in as \{\s+email: 'fetch-\w+@example\.com',\s+avatar: 'https:\/\/s\.gravatar\.com\/avatar\/[0-9a-f]{32}\?s=60',\s+id: \d+\s+\} then read/m,
      /^socket\.io: signed up and logged in as \{\s+email: 'socket-\w+@example\.com'/m,
      /text: 'Hello from socket-\w+@example\.com'/
    ]
  }),
  'write-a-hook': () => ({
    args: [],
    output: [
      /^messages\.create took \d+ ms$/m,
      /^created \[\n {2}\{ text: 'Hello', createdAt: \d+, id: 0 \},/m,
      /^messages\.find took \d+ ms$/m
    ]
  })
}

describe('npm run example', () => {
  it('knows what to expect of every example in examples/', () => {
    expect(examples.length).toBeGreaterThanOrEqual(5)
    expect(Object.keys(runs).sort()).toEqual(examples)
  })

  it.each(examples)(
    'runs %s on its own, prints what it did and exits 0',
    async (name) => {
      const run = runs[name]?.()
      if (run === null) {
        console.warn(`npm run example -- ${name} SKIPPED: no server to run it against (RETHINKDB_URL or Docker)`)
        return
      }
      const { code, stdout, stderr } = await example(name, ...run!.args)
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
      for (const line of run!.output) expect(stdout).toMatch(line)
    },
    90_000
  )

  it('lists the examples and exits 1 without a name, or with one that does not exist', async () => {
    for (const args of [[], ['no-such-example']]) {
      const { code, stderr } = await example(...args)
      expect(code).toBe(1)
      expect(stderr).toContain(`examples: ${examples.join(', ')}`)
    }
  })

  it('says why an example fails, and exits 1', async () => {
    const { code, stderr } = await example('use-the-clients', 'http://127.0.0.1:1')
    expect(code).toBe(1)
    expect(stderr).toBe(
      'example use-the-clients failed: no server answers at http://127.0.0.1:1: start one with npm start (in another terminal), or pass its URL\n'
    )
  })
})
