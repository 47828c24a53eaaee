import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { r, type Connection } from 'rethinkdb-ts'
import { call, signUp } from '../support/app-instances.js'
import { buildMain } from '../support/built-server.js'
import { RETHINKDB_BIN, rethinkDbProcess, type RethinkDbProcess } from '../support/rethinkdb-process.js'
import { makeCertificates, SERVER_NAME, type TestCertificates } from '../support/test-certificates.js'

/*
 * A secured RethinkDB 2.4, for real: server processes this test owns (RETHINKDB_BIN) with an admin
 * password, a user granted only on the app's database, and TLS on the driver port with certificates
 * the test makes (openssl); the built server (`npm start`'s bundle) started against them. It starts
 * with the credentials in RETHINKDB_URL or in RETHINKDB_PASSWORD_FILE, and over TLS with
 * RETHINKDB_TLS_*; a wrong password, a missing permission or a certificate another CA signed stops
 * it at once with one line. No output of any run, and no /health answer, holds a password. Without
 * RETHINKDB_BIN the suite is skipped with one loud line.
 */
const withBinary = RETHINKDB_BIN ? describe : describe.skip
if (!RETHINKDB_BIN)
  process.stderr.write(
    '\nSecured RethinkDB suite (passwords, users, TLS) SKIPPED: set RETHINKDB_BIN to a rethinkdb 2.4 executable\n\n'
  )

/** Passwords that need percent-encoding in a URL; none may ever be printed. */
const ADMIN_PASSWORD = 'adm1n p@ss:w/rd%'
const APP_PASSWORD = 'app-s3cret#1'
const WRONG_PASSWORD = 'not-the-adm1n-password'
const SECRETS = [ADMIN_PASSWORD, APP_PASSWORD, WRONG_PASSWORD].flatMap((secret) => [secret, encodeURIComponent(secret)])

let built: { main: string; outDir: string }
let scratch: string
const servers: RethinkDbProcess[] = []
const connections: Connection[] = []
const running: Started[] = []
/** Every line any app process wrote, and every /health answer: checked for passwords at the end. */
const transcript: string[] = []

beforeAll(async () => {
  if (!RETHINKDB_BIN) return
  built = await buildMain('secured')
  scratch = await mkdtemp(join(tmpdir(), 'plumage-secured-'))
}, 60_000)

afterAll(async () => {
  await Promise.all(running.map((app) => app.stop()))
  await Promise.all(connections.map((connection) => connection.close().catch(() => undefined)))
  await Promise.all(servers.map((server) => server.destroy()))
  if (built) await rm(built.outDir, { recursive: true, force: true })
  if (scratch) await rm(scratch, { recursive: true, force: true })
}, 60_000)

interface Outcome {
  code: number | null
  stdout: string
  stderr: string
}
interface Started {
  url: string
  output: () => string
  stop(): Promise<void>
}

/** Runs the built server with STORE=rethinkdb; `started` once it logged "plumage started", or its exit. */
function launch(env: Record<string, string>): Promise<{ started?: Started; exited?: Outcome }> {
  const child = spawn(process.execPath, [built.main], {
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      STORE: 'rethinkdb',
      AUTH_SECRET: 'a-secured-rethinkdb-test-secret',
      BCRYPT_ROUNDS: '4',
      RETHINKDB_TIMEOUT: '60',
      ...env
    },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const outcome: Outcome = { code: null, stdout: '', stderr: '' }
  const exited = new Promise<Outcome>((resolve) =>
    child.once('close', (code) => {
      transcript.push(outcome.stdout, outcome.stderr)
      resolve({ ...outcome, code })
    })
  )
  child.stderr.on('data', (chunk) => {
    outcome.stderr += String(chunk)
  })
  return new Promise((resolve) => {
    child.stdout.on('data', (chunk) => {
      outcome.stdout += String(chunk)
      const match = /"url":"([^"]+)"[^\n]*"msg":"plumage started"/.exec(outcome.stdout)
      if (match) {
        resolve({
          started: {
            url: match[1]!,
            output: () => `${outcome.stdout}${outcome.stderr}`,
            stop: async () => {
              if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
              await exited
            }
          }
        })
      }
    })
    void exited.then((result) => resolve({ exited: result }))
  })
}

/** The app started against the database; fails with what it printed otherwise. */
async function start(env: Record<string, string>): Promise<Started> {
  const { started, exited } = await launch(env)
  if (!started) throw new Error(`the server did not start (exit ${exited?.code}): ${exited?.stderr}`)
  running.push(started)
  return started
}

/** The app refused to start: its exit code and its output. */
async function refused(env: Record<string, string>): Promise<Outcome> {
  const { started, exited } = await launch(env)
  if (started) {
    await started.stop()
    throw new Error('the server started, but should have refused to')
  }
  return exited!
}

/** Signs up, logs in and posts a message: the tables work for the user of the URL. Answers /health. */
async function works(app: Started, email: string): Promise<void> {
  const token = await signUp(app.url, email)
  const { status } = await call(app.url, token, 'POST', 'messages', { text: `from ${email}` })
  expect(status).toBe(201)
  const health = await fetch(`${app.url}/health`)
  const body = await health.text()
  transcript.push(body)
  expect({ status: health.status, body: JSON.parse(body) as unknown }).toMatchObject({
    status: 200,
    body: { status: 'ok' }
  })
}

async function adminConnection(server: RethinkDbProcess, password?: string): Promise<Connection> {
  const connection = await r.connect({
    host: '127.0.0.1',
    port: server.driverPort,
    ...(password ? { password } : {}),
    silent: true
  })
  connections.push(connection)
  return connection
}

const urlOf = (server: RethinkDbProcess, db: string, credentials = '') =>
  `rethinkdb://${credentials}127.0.0.1:${server.driverPort}/${db}`

withBinary('a RethinkDB whose admin has a password', () => {
  let server: RethinkDbProcess
  let admin: Connection

  beforeAll(async () => {
    server = await rethinkDbProcess('password')
    servers.push(server)
    admin = await adminConnection(server)
    await r.db('rethinkdb').table('users').get('admin').update({ password: ADMIN_PASSWORD }).run(admin)
  }, 90_000)

  it('serves with the percent-encoded credentials in RETHINKDB_URL', async () => {
    const app = await start({
      RETHINKDB_URL: urlOf(server, 'with_url', `admin:${encodeURIComponent(ADMIN_PASSWORD)}@`)
    })
    await works(app, 'url@example.com')
    expect(app.output()).toContain('"msg":"Connected to RethinkDB"')
  }, 90_000)

  it('serves with the password in RETHINKDB_PASSWORD_FILE and the user in the URL', async () => {
    const file = join(scratch, 'admin-password')
    await writeFile(file, `${ADMIN_PASSWORD}\n`, { mode: 0o600 })
    const app = await start({ RETHINKDB_URL: urlOf(server, 'with_file', 'admin@'), RETHINKDB_PASSWORD_FILE: file })
    await works(app, 'file@example.com')
  }, 90_000)

  it('stops at once with one line, the password redacted, when the password is wrong', async () => {
    const { code, stdout, stderr } = await refused({
      RETHINKDB_URL: urlOf(server, 'wrong', `admin:${WRONG_PASSWORD}@`)
    })
    expect(code).toBe(1)
    expect(stderr).toBe(
      `plumage failed to start: RethinkDB at 127.0.0.1:${server.driverPort} refused the login of user 'admin': Wrong password ` +
        `(check the user and password of RETHINKDB_URL rethinkdb://admin:***@127.0.0.1:${server.driverPort}/wrong, or RETHINKDB_PASSWORD_FILE)\n`
    )
    expect(stdout).not.toContain('plumage started')
  }, 90_000)

  it('stops the same way without a password, and for a user that does not exist', async () => {
    const none = await refused({ RETHINKDB_URL: urlOf(server, 'none') })
    expect(none.stderr).toMatch(
      /^plumage failed to start: RethinkDB at [^ ]+ refused the login of user 'admin': Wrong password \(check .*\)\n$/
    )
    const unknown = await refused({ RETHINKDB_URL: urlOf(server, 'nobody', `nobody:${WRONG_PASSWORD}@`) })
    expect(unknown.stderr).toMatch(
      /^plumage failed to start: RethinkDB at [^ ]+ refused the login of user 'nobody': Unknown user \(check .*rethinkdb:\/\/nobody:\*\*\*@.*\)\n$/
    )
  }, 90_000)

  it("a user granted read, write and config on the app's database only: serves once an admin created the database", async () => {
    await r.dbCreate('granted').run(admin)
    await r.db('rethinkdb').table('users').insert({ id: 'app', password: APP_PASSWORD }).run(admin)
    await r.db('granted').grant('app', { read: true, write: true, config: true }).run(admin)
    const app = await start({ RETHINKDB_URL: urlOf(server, 'granted', `app:${encodeURIComponent(APP_PASSWORD)}@`) })
    await works(app, 'granted@example.com')
  }, 90_000)

  it('that user, without config: one line naming the user, the permission, the database and the grant', async () => {
    await r.dbCreate('no_config').run(admin)
    await r.db('no_config').grant('app', { read: true, write: true }).run(admin)
    const { code, stderr } = await refused({
      RETHINKDB_URL: urlOf(server, 'no_config', `app:${encodeURIComponent(APP_PASSWORD)}@`)
    })
    expect(code).toBe(1)
    expect(stderr).toBe(
      "plumage failed to start: RethinkDB user 'app' lacks the `config` permission on database 'no_config' " +
        "(needed to create and check its tables at startup; grant it with r.db('no_config').grant('app', {read: true, write: true, config: true}))\n"
    )
  }, 90_000)

  it('that user, on a database that does not exist: one line saying an admin must create it', async () => {
    const { code, stderr } = await refused({
      RETHINKDB_URL: urlOf(server, 'missing', `app:${encodeURIComponent(APP_PASSWORD)}@`)
    })
    expect(code).toBe(1)
    expect(stderr).toBe(
      "plumage failed to start: RethinkDB user 'app' may not create database 'missing' (that needs the `config` permission on the server): " +
        "create it as admin with r.dbCreate('missing'), then r.db('missing').grant('app', {read: true, write: true, config: true})\n"
    )
  }, 90_000)

  it('with the server gone, /health says so without any password', async () => {
    await server.kill()
    for (const app of running) {
      const health = await fetch(`${app.url}/health`)
      const body = await health.text()
      transcript.push(body)
      expect({ status: health.status, problems: (JSON.parse(body) as { problems?: string[] }).problems }).toEqual({
        status: 503,
        problems: [`RethinkDB at 127.0.0.1:${server.driverPort} cannot be reached`]
      })
    }
  }, 30_000)
})

withBinary('a RethinkDB serving TLS on its driver port', () => {
  let certificates: TestCertificates
  let server: RethinkDbProcess
  const tlsServer = (name: string, ...args: string[]) =>
    rethinkDbProcess(name, {
      args: ['--driver-tls-key', certificates.serverKey, '--driver-tls-cert', certificates.serverCert, ...args]
    })

  beforeAll(async () => {
    certificates = await makeCertificates()
    server = await tlsServer('tls')
    servers.push(server)
  }, 90_000)
  afterAll(() => certificates?.remove())

  it("serves with RETHINKDB_TLS_CA, and RETHINKDB_TLS_SERVERNAME for the name in the server's certificate", async () => {
    const app = await start({
      RETHINKDB_URL: urlOf(server, 'tls'),
      RETHINKDB_TLS_CA: certificates.ca,
      RETHINKDB_TLS_SERVERNAME: SERVER_NAME
    })
    await works(app, 'tls@example.com')
    const connected = app
      .output()
      .split('\n')
      .find((line) => line.includes('"msg":"Connected to RethinkDB"'))
    expect(JSON.parse(connected ?? '{}')).toMatchObject({ tls: true, servers: `127.0.0.1:${server.driverPort}` })
  }, 90_000)

  it('refuses at once, in one line, a server whose certificate another CA signed', async () => {
    const { code, stderr } = await refused({
      RETHINKDB_URL: urlOf(server, 'tls'),
      RETHINKDB_TLS_CA: certificates.otherCa,
      RETHINKDB_TLS_SERVERNAME: SERVER_NAME
    })
    expect(code).toBe(1)
    expect(stderr).toMatch(
      new RegExp(
        `^plumage failed to start: RethinkDB at 127\\.0\\.0\\.1:${server.driverPort} failed the TLS check: [^\\n]+ ` +
          "\\((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)\\); RETHINKDB_TLS_CA must be the CA that signed the server's certificate\\n$"
      )
    )
  }, 90_000)

  it('refuses a certificate that does not name the host of the URL, saying to set RETHINKDB_TLS_SERVERNAME', async () => {
    const { code, stderr } = await refused({ RETHINKDB_URL: urlOf(server, 'tls'), RETHINKDB_TLS_CA: certificates.ca })
    expect(code).toBe(1)
    expect(stderr).toMatch(
      /^plumage failed to start: RethinkDB at \S+ failed the TLS check: .+ \(ERR_TLS_CERT_ALTNAME_INVALID\); .+ set RETHINKDB_TLS_SERVERNAME to a name it carries\n$/
    )
  }, 90_000)

  it('a server that asks for client certificates (--driver-tls-ca): serves with RETHINKDB_TLS_CERT and RETHINKDB_TLS_KEY, says so in one line without', async () => {
    const mutual = await tlsServer('mutual', '--driver-tls-ca', certificates.ca)
    servers.push(mutual)
    const tls = {
      RETHINKDB_URL: urlOf(mutual, 'mutual'),
      RETHINKDB_TLS_CA: certificates.ca,
      RETHINKDB_TLS_SERVERNAME: SERVER_NAME
    }
    await works(
      await start({ ...tls, RETHINKDB_TLS_CERT: certificates.clientCert, RETHINKDB_TLS_KEY: certificates.clientKey }),
      'mutual@example.com'
    )
    const { code, stderr } = await refused(tls)
    expect(code).toBe(1)
    expect(stderr).toMatch(
      /^plumage failed to start: RethinkDB at \S+ failed the TLS check: .+ \(ERR_SSL_\w+\); the server wants a client certificate it trusts: set RETHINKDB_TLS_CERT and RETHINKDB_TLS_KEY\n$/
    )
  }, 90_000)
})

withBinary('every output of those runs', () => {
  it('holds no password, plain or percent-encoded', () => {
    const texts = [...transcript, ...running.map((app) => app.output())]
    expect(texts.join('')).toContain('plumage failed to start')
    const leaks = texts.flatMap((text) =>
      SECRETS.filter((secret) => text.includes(secret)).map((secret) => `${secret} in ${text.slice(0, 200)}`)
    )
    expect(leaks).toEqual([])
  })
})
