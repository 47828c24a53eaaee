import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { spawn } from 'node:child_process'
import { buildServer, type BuiltServer, type StartedServer } from '../support/built-server.js'
import { discoverRethinkDb } from '../support/rethinkdb-server.js'

/*
 * The email of users made unique on a database that already holds users (written straight into the
 * `users` table, as by an earlier version or an import): three real instances of the built server starting
 * at once back-fill the keys and agree, and an instance refuses to start, naming the duplicates, once two
 * users share an email. Needs a RethinkDB server (RETHINKDB_BIN, RETHINKDB_URL or Docker); otherwise the
 * run prints the loud SKIPPED line.
 */
const server = await discoverRethinkDb()
const withServer = server ? describe : describe.skip
const SECRET = 'unique-backfill-test-secret'

let built: BuiltServer
const running: StartedServer[] = []

beforeAll(async () => {
  if (server) built = await buildServer('backfill')
}, 60_000)

afterAll(async () => {
  for (const started of running) {
    if (started.child.exitCode === null && started.child.signalCode === null) started.child.kill('SIGTERM')
    await started.exited
  }
  await built?.cleanup()
  await server?.stop()
})

withServer('back-filling unique emails on RethinkDB', () => {
  it('lets three instances starting together claim existing emails, and refuses duplicates by name', async () => {
    const r = server!.r
    const db = `${server!.db}_backfill`
    const env = { STORE: 'rethinkdb', RETHINKDB_URL: `rethinkdb://${server!.host}:${server!.port}/${db}` }
    await r.dbCreate(db).run()
    await r.db(db).tableCreate('users').run()
    const emails = Array.from({ length: 30 }, (_, i) => `User${i}@Example.com`)
    const { generated_keys: ids } = await r
      .db(db)
      .table('users')
      .insert(emails.map((email) => ({ email, password: 'not-a-hash' })))
      .run()
    const start = () => built.start({ ...env, AUTH_SECRET: SECRET, BCRYPT_ROUNDS: '4' })
    const three = await Promise.all([start(), start(), start()])
    running.push(...three)

    const keys = (await r.db(db).table('unique_keys').coerceTo('array').run()) as { key: string; holder?: string }[]
    expect(keys.map(({ key, holder }) => [key, holder]).sort()).toEqual(
      emails.map((email, i) => [email.toLowerCase(), ids![i]]).sort()
    )
    const signup = await fetch(`http://127.0.0.1:${three[1]!.port}/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'user7@example.com', password: 'a-new-password' })
    })
    expect(signup.status).toBe(409)
    for (const started of three) {
      started.child.kill('SIGTERM')
      await started.exited
    }

    // A user written straight into the table with an email already taken: the next start is refused.
    const { generated_keys: [copy] = [] } = await r
      .db(db)
      .table('users')
      .insert({ email: 'USER3@example.com', password: 'not-a-hash' })
      .run()
    const refused = spawn(process.execPath, [built.main], {
      env: { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'test', AUTH_SECRET: SECRET },
      stdio: ['ignore', 'ignore', 'pipe']
    })
    let stderr = ''
    refused.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const code = await new Promise<number | null>((resolve) => refused.once('exit', resolve))
    expect(code).toBe(1)
    expect(stderr).toContain(`plumage failed to start: 'email' of 'users' is unique`)
    const both = [ids![3]!, copy!].sort((a, b) => a.localeCompare(b))
    expect(stderr).toContain(`'user3@example.com' (ids "${both[0]}", "${both[1]}")`)
  }, 180_000)
})
