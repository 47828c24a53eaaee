import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError, type Env } from '../../../src/infrastructure/config/environment.js'
import { readRethinkDbSettings } from '../../../src/infrastructure/rethinkdb/rethinkdb-settings.js'

/** The error reading throws: always a ConfigError, one line naming the variable. */
function failure(env: Env): ConfigError {
  try {
    readRethinkDbSettings(env)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as Error).message).not.toContain('\n')
    return error as ConfigError
  }
  throw new Error(`readRethinkDbSettings accepted ${JSON.stringify(env)}`)
}

describe("the RethinkDB store module's settings", () => {
  it('default to one local server, database plumage, 30 s, live tables of any layout, direct writes published', () => {
    expect(readRethinkDbSettings({})).toEqual({
      url: 'rethinkdb://127.0.0.1:28015/plumage',
      db: 'plumage',
      timeoutMs: 30_000,
      directWrites: true
    })
    expect(readRethinkDbSettings({ RETHINKDB_URL: '', RETHINKDB_TIMEOUT: '', RETHINKDB_REPLICAS: '' })).toEqual(
      readRethinkDbSettings({})
    )
  })

  it('read RETHINKDB_URL as is, with its database', () => {
    expect(readRethinkDbSettings({ RETHINKDB_URL: 'rethinkdb://db:28015/chat' })).toMatchObject({
      url: 'rethinkdb://db:28015/chat',
      db: 'chat'
    })
    expect(readRethinkDbSettings({ RETHINKDB_URL: 'rethinkdb://db' }).db).toBe('test')
  })

  it('accept the servers of a cluster, comma-separated', () => {
    expect(readRethinkDbSettings({ RETHINKDB_URL: 'rethinkdb://h1:28015,h2:28016,h3/chat' }).url).toBe(
      'rethinkdb://h1:28015,h2:28016,h3/chat'
    )
  })

  it('read the cluster and startup settings beside it', () => {
    expect(
      readRethinkDbSettings({
        RETHINKDB_TIMEOUT: '5',
        RETHINKDB_REPLICAS: '3',
        RETHINKDB_SHARDS: '2',
        RETHINKDB_DIRECT_WRITES: 'false'
      })
    ).toMatchObject({
      timeoutMs: 5_000,
      replicas: 3,
      shards: 2,
      directWrites: false
    })
    expect(failure({ RETHINKDB_REPLICAS: '0' }).message).toBe(
      "RETHINKDB_REPLICAS must be an integer from 1 to 64 (got '0')"
    )
    expect(failure({ RETHINKDB_SHARDS: '65' }).message).toBe(
      "RETHINKDB_SHARDS must be an integer from 1 to 64 (got '65')"
    )
    expect(failure({ RETHINKDB_TIMEOUT: 'soon' }).message).toBe(
      "RETHINKDB_TIMEOUT must be an integer from 1 to 3600 (got 'soon')"
    )
    expect(failure({ RETHINKDB_DIRECT_WRITES: 'maybe' }).message).toBe(
      "RETHINKDB_DIRECT_WRITES must be true or false (got 'maybe')"
    )
  })

  it('refuse a URL that is not rethinkdb://[user:password@]host[:port][/db]', () => {
    expect(failure({ RETHINKDB_URL: 'postgres://db/chat' }).message).toBe(
      "RETHINKDB_URL must look like rethinkdb://[user:password@]host:28015/db, or rethinkdb://host1:28015,host2:28015/db for a cluster (got 'postgres://db/chat')"
    )
    expect(failure({ RETHINKDB_URL: 'rethinkdb://db/my.chat' }).message).toMatch(/^RETHINKDB_URL must look like/)
  })

  it('accept credentials in the URL, for one server or every server of a cluster', () => {
    expect(readRethinkDbSettings({ RETHINKDB_URL: 'rethinkdb://app:s3cret@db:28015/app' })).toMatchObject({
      url: 'rethinkdb://app:s3cret@db:28015/app',
      db: 'app'
    })
    expect(readRethinkDbSettings({ RETHINKDB_URL: 'rethinkdb://u:p%40ss@h1:28015,h2:28015/db' }).db).toBe('db')
  })

  it('never show the password of a URL they refuse', () => {
    const shape = failure({ RETHINKDB_URL: 'rethinkdb://app:s3cret@db:70000/app' }).message
    expect(shape).toBe(
      "RETHINKDB_URL must look like rethinkdb://[user:password@]host:28015/db, or rethinkdb://host1:28015,host2:28015/db for a cluster (got 'rethinkdb://app:***@db:70000/app')"
    )
    const encoding = failure({ RETHINKDB_URL: 'rethinkdb://app:50%off@db/app' }).message
    expect(encoding).toBe(
      "RETHINKDB_URL must percent-encode its user and password (% as %25, @ as %40) (got 'rethinkdb://app:***@db/app')"
    )
    expect(`${shape}${encoding}`).not.toMatch(/s3cret|50%off/)
  })

  describe('RETHINKDB_PASSWORD_FILE', () => {
    let folder: string
    beforeAll(async () => {
      folder = await mkdtemp(join(tmpdir(), 'plumage-secret-'))
    })
    afterAll(() => rm(folder, { recursive: true, force: true }))
    const secret = async (name: string, content: string) => {
      const path = join(folder, name)
      await writeFile(path, content)
      return path
    }

    it('reads the password from the file, without its trailing line break', async () => {
      expect(
        readRethinkDbSettings({
          RETHINKDB_URL: 'rethinkdb://app@db/app',
          RETHINKDB_PASSWORD_FILE: await secret('lf', 's3cret\n')
        }).password
      ).toBe('s3cret')
      expect(readRethinkDbSettings({ RETHINKDB_PASSWORD_FILE: await secret('crlf', 's3cret\r\n') }).password).toBe(
        's3cret'
      )
      expect(
        readRethinkDbSettings({ RETHINKDB_PASSWORD_FILE: await secret('spaces', ' two words \n\n') }).password
      ).toBe(' two words \n')
      expect(readRethinkDbSettings({ RETHINKDB_PASSWORD_FILE: '' })).not.toHaveProperty('password')
    })

    it('refuse a file that cannot be read, naming the variable and the path', () => {
      const path = join(folder, 'missing')
      expect(failure({ RETHINKDB_PASSWORD_FILE: path }).message).toBe(
        `RETHINKDB_PASSWORD_FILE names a file that cannot be read ('${path}': ENOENT)`
      )
      expect(failure({ RETHINKDB_PASSWORD_FILE: folder }).message).toBe(
        `RETHINKDB_PASSWORD_FILE names a file that cannot be read ('${folder}': EISDIR)`
      )
    })

    it('refuse an empty file', async () => {
      const path = await secret('empty', '\n')
      expect(failure({ RETHINKDB_PASSWORD_FILE: path }).message).toBe(
        `RETHINKDB_PASSWORD_FILE names an empty file ('${path}')`
      )
    })

    it('refuse a password in both the URL and the file, showing neither', async () => {
      const message = failure({
        RETHINKDB_URL: 'rethinkdb://app:s3cret@db/app',
        RETHINKDB_PASSWORD_FILE: await secret('both', 'other\n')
      }).message
      expect(message).toBe(
        'RETHINKDB_URL holds a password and RETHINKDB_PASSWORD_FILE is set: give the password in one of them only'
      )
    })
  })

  describe('RETHINKDB_TLS_*', () => {
    let folder: string
    beforeAll(async () => {
      folder = await mkdtemp(join(tmpdir(), 'plumage-tls-'))
    })
    afterAll(() => rm(folder, { recursive: true, force: true }))
    const file = async (name: string, content: string) => {
      const path = join(folder, name)
      await writeFile(path, content)
      return path
    }
    const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'

    it('leave TLS off when none is set', () => {
      expect(readRethinkDbSettings({ RETHINKDB_TLS_CA: '', RETHINKDB_TLS_SERVERNAME: '' })).not.toHaveProperty('tls')
    })

    it("read the CA file's contents, with the server name beside it", async () => {
      const ca = await file('ca.pem', PEM)
      expect(readRethinkDbSettings({ RETHINKDB_TLS_CA: ca, RETHINKDB_TLS_SERVERNAME: 'db.internal' }).tls).toEqual({
        ca: PEM,
        servername: 'db.internal'
      })
    })

    it("turn TLS on with Node's trusted CAs when only a server name is set", () => {
      expect(readRethinkDbSettings({ RETHINKDB_TLS_SERVERNAME: 'db.example.com' }).tls).toEqual({
        servername: 'db.example.com'
      })
    })

    it('refuse a file that cannot be read, or a CA file without a certificate, naming the variable', async () => {
      const missing = join(folder, 'missing.pem')
      expect(failure({ RETHINKDB_TLS_CA: missing }).message).toBe(
        `RETHINKDB_TLS_CA names a file that cannot be read ('${missing}': ENOENT)`
      )
      expect(failure({ RETHINKDB_TLS_CA: await file('notes.txt', 'not a certificate') }).message).toBe(
        'RETHINKDB_TLS_CA must name a PEM certificate (no certificate in the file)'
      )
    })

    it('take a client certificate and its key together only, and only when they are PEM', async () => {
      const cert = await file('client.pem', 'garbage')
      expect(failure({ RETHINKDB_TLS_CERT: cert }).message).toBe(
        'RETHINKDB_TLS_CERT and RETHINKDB_TLS_KEY go together: set both (a client certificate and its key) or neither'
      )
      expect(failure({ RETHINKDB_TLS_KEY: cert }).message).toMatch(
        /^RETHINKDB_TLS_CERT and RETHINKDB_TLS_KEY go together/
      )
      expect(
        failure({ RETHINKDB_TLS_CERT: cert, RETHINKDB_TLS_KEY: await file('client.key', 'garbage') }).message
      ).toMatch(/^RETHINKDB_TLS_CERT and RETHINKDB_TLS_KEY must name a PEM certificate and its private key \(.+\)$/)
    })
  })
})
