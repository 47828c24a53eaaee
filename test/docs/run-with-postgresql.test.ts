import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { buildServer, type BuiltServer, type StartedServer } from '../support/built-server.js'
import { postgresBin, SKIP_MESSAGE, startPostgres, type PostgresServer } from '../support/postgres-server.js'

/*
 * the guide "Run with PostgreSQL", executed from an empty server: a throw-away PostgreSQL whose superuser is
 * `postgres` and whose TCP logins check passwords, the guide's own psql commands (read from its blocks, so the
 * text is what is tested) to make the role and its database, then the server as `npm start` runs it with the
 * guide's STORE and POSTGRES_URL (only the port is this server's): /health answers, and a create is stored in a
 * table the new role owns.
 */
const run = promisify(execFile)
const bin = postgresBin()
if (!bin && process.env.CI === 'true') throw new Error(`PostgreSQL is required on CI: ${SKIP_MESSAGE}`)
if (!bin) process.stderr.write(`\n${SKIP_MESSAGE}\n\n`)

/** The bash blocks of the guide "Run with PostgreSQL" (docs/guides/run-with-postgresql.md), in order. */
function sectionBlocks(): string[] {
  const section = readFileSync('docs/guides/run-with-postgresql.md', 'utf8')
  return [...section.matchAll(/```bash\n([\s\S]*?)\n```/g)].map((match) => match[1]!)
}

const blocks = sectionBlocks()
/** Every line of the first block: `sudo -u postgres psql -c "<SQL>"`. */
const setup = blocks[0]!.split('\n')
/** The start command: `NAME=value … npm start`. */
const startCommand = blocks.find((block) => /^STORE=postgres .*npm start$/.test(block))

let postgres: PostgresServer
let built: BuiltServer
let started: StartedServer

/** psql as the guide runs it (`sudo -u postgres psql`): the superuser, on the server's trusted local socket. */
const psql = (...args: string[]) =>
  run(join(bin!, 'psql'), [
    '-h',
    postgres.socketDir,
    '-p',
    String(postgres.port),
    '-U',
    'postgres',
    '-X',
    '-v',
    'ON_ERROR_STOP=1',
    ...args
  ])

;(bin ? describe : describe.skip)('the guide "Run with PostgreSQL", from an empty server', () => {
  beforeAll(async () => {
    ;[postgres, built] = await Promise.all([
      startPostgres({ superuser: 'postgres', hostAuth: 'scram-sha-256' }),
      buildServer('readme-postgres')
    ])
  }, 120_000)

  afterAll(async () => {
    await built?.cleanup()
    await postgres?.stop()
  })

  it('creates the role and its database with the commands the guide gives', async () => {
    expect(setup.length).toBeGreaterThanOrEqual(2)
    for (const line of setup) {
      const sql = /^sudo -u postgres psql -c "([^"]+)"$/.exec(line)?.[1]
      expect(`${line}: ${sql !== undefined}`).toBe(`${line}: true`)
      await psql('-d', 'postgres', '-c', sql!)
    }
    const { stdout } = await psql(
      '-d',
      'postgres',
      '-tA',
      '-c',
      "SELECT datname, pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'plumage'"
    )
    expect(stdout.trim()).toBe('plumage|plumage')
  })

  it("starts the app with the guide's STORE and POSTGRES_URL: /health answers and a create is stored", async () => {
    expect(startCommand).toBeDefined()
    const env = Object.fromEntries(
      [...startCommand!.matchAll(/([A-Z][A-Z_]+)=(\S+)/g)].map((match) => [match[1]!, match[2]!])
    )
    expect(env.STORE).toBe('postgres')
    expect(env.POSTGRES_URL).toMatch(/^postgres:\/\/plumage:[^@]+@127\.0\.0\.1:5432\/plumage$/)
    const url = env.POSTGRES_URL!.replace('127.0.0.1:5432', `127.0.0.1:${postgres.port}`)
    started = await built.start({ ...env, POSTGRES_URL: url, BCRYPT_ROUNDS: '4' })
    const base = `http://127.0.0.1:${started.port}`

    const health = await fetch(`${base}/health`)
    expect(health.status).toBe(200)
    expect(await health.json()).toMatchObject({ status: 'ok' })

    const created = await fetch(`${base}/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ann@example.com', password: 'secret-pw' })
    })
    expect(created.status).toBe(201)
    expect(await created.json()).toMatchObject({ email: 'ann@example.com' })

    // In the guide's database, in a table the guide's role made (as owner of the database).
    const { stdout } = await psql(
      '-d',
      'plumage',
      '-tA',
      '-c',
      "SELECT tableowner, (SELECT count(*) FROM users) FROM pg_tables WHERE tablename = 'users'"
    )
    expect(stdout.trim()).toBe('plumage|1')
  }, 60_000)

  it("refuses the role a wrong password (the URL's password is what logged in)", async () => {
    await expect(
      run(join(bin!, 'psql'), [`postgres://plumage:wrong@127.0.0.1:${postgres.port}/plumage`, '-c', 'SELECT 1'])
    ).rejects.toThrow(/password authentication failed/)
  })
})
