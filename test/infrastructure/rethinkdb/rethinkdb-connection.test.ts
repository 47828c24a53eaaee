import { createServer } from 'node:net'
import { r } from 'rethinkdb-ts'
import { Unavailable } from '../../../src/domain/errors/errors.js'
import { MATCH_ALL } from '../../../src/domain/query/ast.js'
import {
  connectRethinkDb,
  describeServers,
  InvalidRethinkDbUrl,
  parseRethinkDbUrl,
  redactRethinkDbUrl
} from '../../../src/infrastructure/rethinkdb/rethinkdb-connection.js'
import { RethinkDbStoreFactory } from '../../../src/infrastructure/rethinkdb/rethinkdb-store-factory.js'
import { RethinkDbStore } from '../../../src/infrastructure/rethinkdb/rethinkdb-store.js'
import { standInRethinkDb } from '../../support/stand-in-rethinkdb.js'

/** A local port nothing listens on: connections are refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

describe('parseRethinkDbUrl', () => {
  it('reads host, port and database', () => {
    expect(parseRethinkDbUrl('rethinkdb://rethinkdb:28015/plumage')).toEqual({
      servers: [{ host: 'rethinkdb', port: 28015 }],
      db: 'plumage'
    })
  })

  it('defaults the port and leaves the database out when the path is empty', () => {
    expect(parseRethinkDbUrl('rethinkdb://db.example')).toEqual({ servers: [{ host: 'db.example', port: 28015 }] })
    expect(parseRethinkDbUrl('rethinkdb://db.example/')).toEqual({ servers: [{ host: 'db.example', port: 28015 }] })
  })

  it('reads credentials', () => {
    expect(parseRethinkDbUrl('rethinkdb://app:s%40cret@10.0.0.5:29015/prod')).toEqual({
      servers: [{ host: '10.0.0.5', port: 29015 }],
      db: 'prod',
      user: 'app',
      password: 's@cret'
    })
  })

  it('reads percent-encoded credentials up to the last @, a password with : / and @ included, and a user alone', () => {
    expect(parseRethinkDbUrl('rethinkdb://ann%20lee:p%25ss:w/rd@db:28015/app')).toEqual({
      servers: [{ host: 'db', port: 28015 }],
      db: 'app',
      user: 'ann lee',
      password: 'p%ss:w/rd'
    })
    expect(parseRethinkDbUrl('rethinkdb://app:a@b@db/app')).toMatchObject({ user: 'app', password: 'a@b' })
    expect(parseRethinkDbUrl('rethinkdb://app@db/app')).toEqual({
      servers: [{ host: 'db', port: 28015 }],
      db: 'app',
      user: 'app'
    })
  })

  it('uses one user for every server of a cluster', () => {
    expect(parseRethinkDbUrl('rethinkdb://u:p@h1:28015,h2:28016/db')).toEqual({
      servers: [
        { host: 'h1', port: 28015 },
        { host: 'h2', port: 28016 }
      ],
      db: 'db',
      user: 'u',
      password: 'p'
    })
  })

  it('refuses credentials that are not percent-encoded, without showing the password', () => {
    const attempt = () => parseRethinkDbUrl('rethinkdb://app:100%sure@db/app')
    expect(attempt).toThrow(InvalidRethinkDbUrl)
    expect(attempt).toThrow(
      "Invalid RethinkDB URL 'rethinkdb://app:***@db/app': it must percent-encode its user and password (% as %25, @ as %40)"
    )
  })

  it('shows a URL it refuses with the password redacted', () => {
    expect(() => parseRethinkDbUrl('rethinkdb://app:s3cret@db:99999/app')).toThrow(
      "Invalid RethinkDB URL 'rethinkdb://app:***@db:99999/app'"
    )
    expect(() => parseRethinkDbUrl('postgres://app:s3cret@db/app')).toThrow("'postgres://app:***@db/app'")
  })

  it('reads the servers of a cluster, comma-separated, each with its own port or the default', () => {
    expect(parseRethinkDbUrl('rethinkdb://h1:28015,h2:28016,[::1]:28017,h4/chat')).toEqual({
      servers: [
        { host: 'h1', port: 28015 },
        { host: 'h2', port: 28016 },
        { host: '::1', port: 28017 },
        { host: 'h4', port: 28015 }
      ],
      db: 'chat'
    })
    expect(describeServers(parseRethinkDbUrl('rethinkdb://h1:1,[::1]:2').servers)).toBe('h1:1,[::1]:2')
  })

  it('refuses an empty host in a list and a port out of range', () => {
    expect(() => parseRethinkDbUrl('rethinkdb://h1:28015,,h2/chat')).toThrow(
      'must look like rethinkdb://[user:password@]host:28015/db'
    )
    expect(() => parseRethinkDbUrl('rethinkdb://h1:70000/chat')).toThrow(
      'must look like rethinkdb://[user:password@]host:28015/db'
    )
  })

  it('refuses other schemes with a message that shows the expected form', () => {
    expect(() => parseRethinkDbUrl('mongodb://localhost/plumage')).toThrow(
      'must look like rethinkdb://[user:password@]host:28015/db'
    )
    expect(() => parseRethinkDbUrl('not a url')).toThrow('must look like rethinkdb://[user:password@]host:28015/db')
  })
})

describe('redactRethinkDbUrl', () => {
  it('replaces the password, whatever it holds, with ***', () => {
    expect(redactRethinkDbUrl('rethinkdb://app:s3cret@db:28015/app')).toBe('rethinkdb://app:***@db:28015/app')
    expect(redactRethinkDbUrl('rethinkdb://u:p%40ss:w/rd@h1:28015,h2:28015/db')).toBe(
      'rethinkdb://u:***@h1:28015,h2:28015/db'
    )
  })

  it('leaves a URL without a password as it is', () => {
    expect(redactRethinkDbUrl('rethinkdb://db:28015/app')).toBe('rethinkdb://db:28015/app')
    expect(redactRethinkDbUrl('rethinkdb://app@db:28015/app')).toBe('rethinkdb://app@db:28015/app')
    expect(redactRethinkDbUrl('not a url')).toBe('not a url')
  })
})

describe('without a reachable server', () => {
  it('connectRethinkDb gives up after its timeout with Unavailable', async () => {
    const port = await closedPort()
    await expect(connectRethinkDb(`rethinkdb://127.0.0.1:${port}/plumage`, { timeoutMs: 200 })).rejects.toBeInstanceOf(
      Unavailable
    )
  })

  it("says once that it waits, where, for how long, and the driver's reason", async () => {
    const port = await closedPort()
    const warnings: { message: string; details?: Record<string, unknown> }[] = []
    const logger = {
      debug() {},
      info() {},
      error() {},
      warn: (message: string, details?: Record<string, unknown>) => warnings.push({ message, details })
    }
    await expect(
      connectRethinkDb(`rethinkdb://127.0.0.1:${port}/plumage`, { timeoutMs: 2_500, logger })
    ).rejects.toThrow(`Cannot reach RethinkDB at 127.0.0.1:${port} (waited 3 s; set RETHINKDB_TIMEOUT to wait longer)`)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]!.message).toBe(`waiting for RethinkDB at 127.0.0.1:${port} (up to 3 s)`)
    expect(warnings[0]!.details?.reason).toMatch(/ECONNREFUSED/)
  })

  it('names an unknown host in its reason', async () => {
    const warnings: { message: string; details?: Record<string, unknown> }[] = []
    const logger = {
      debug() {},
      info() {},
      error() {},
      warn: (message: string, details?: Record<string, unknown>) => warnings.push({ message, details })
    }
    await expect(
      connectRethinkDb('rethinkdb://no-such-host.invalid:28015/plumage', { timeoutMs: 1_500, logger })
    ).rejects.toBeInstanceOf(Unavailable)
    expect(warnings[0]!.details?.reason).toMatch(/ENOTFOUND|EAI_AGAIN/)
  })

  it('a store over a pool with no open connection answers 503 at once', async () => {
    const port = await closedPort()
    const pool = await r.connectPool({ servers: [{ host: '127.0.0.1', port }], silent: true, waitForHealthy: false })
    try {
      const store = new RethinkDbStore({ r, table: 'items', db: 'plumage' })
      const started = Date.now()
      await expect(store.find({ filter: MATCH_ALL, sort: [], skip: 0 })).rejects.toMatchObject({
        name: 'Unavailable',
        code: 503
      })
      await expect(store.create([{ name: 'x' }], {})).rejects.toMatchObject({ code: 503 })
      expect(Date.now() - started).toBeLessThan(1_000)
    } finally {
      await pool.drain()
    }
  })
})

describe('logging in (a stand-in server that checks the password as RethinkDB does)', () => {
  const PASSWORD = 's3cret p@ss:w/rd'

  it('logs in with the percent-encoded credentials of the URL', async () => {
    const server = await standInRethinkDb({ password: PASSWORD })
    try {
      const connection = await connectRethinkDb(
        `rethinkdb://app:${encodeURIComponent(PASSWORD)}@127.0.0.1:${server.port}/app`,
        { timeoutMs: 20_000 }
      )
      await connection.close()
      expect(server.accepted).toContain('app')
    } finally {
      server.close()
    }
  }, 30_000)

  it('logs in with the password of RETHINKDB_PASSWORD_FILE and the user of the URL', async () => {
    const server = await standInRethinkDb({ password: PASSWORD })
    try {
      const connection = await connectRethinkDb(`rethinkdb://app@127.0.0.1:${server.port}/app`, {
        timeoutMs: 20_000,
        password: PASSWORD
      })
      await connection.close()
      expect(server.accepted).toContain('app')
    } finally {
      server.close()
    }
  }, 30_000)

  it("stops at once on a wrong password, in one line, with the URL's password redacted", async () => {
    const server = await standInRethinkDb({ password: "the server's own" })
    const logged: string[] = []
    const logger = {
      debug() {},
      info() {},
      error() {},
      warn: (message: string, details?: Record<string, unknown>) => logged.push(message, JSON.stringify(details))
    }
    try {
      // Well inside the test's own timeout: giving up on time would say "Cannot reach" instead.
      const url = `rethinkdb://app:${encodeURIComponent(PASSWORD)}@127.0.0.1:${server.port}/app`
      const message = await connectRethinkDb(url, { timeoutMs: 20_000, logger }).then(
        () => 'connected',
        (error: Error) => error.message
      )
      expect(message).toBe(
        `RethinkDB at 127.0.0.1:${server.port} refused the login of user 'app': Wrong password ` +
          `(check the user and password of RETHINKDB_URL rethinkdb://app:***@127.0.0.1:${server.port}/app, or RETHINKDB_PASSWORD_FILE)`
      )
      expect(server.users).toContain('app')
      expect(
        [message, ...logged].filter((line) => line.includes(PASSWORD) || line.includes(encodeURIComponent(PASSWORD)))
      ).toEqual([])
    } finally {
      server.close()
    }
  }, 30_000)

  it("does the same with a wrong password file, as the driver's default user admin", async () => {
    const server = await standInRethinkDb({ password: "the server's own" })
    try {
      const message = await connectRethinkDb(`rethinkdb://127.0.0.1:${server.port}/app`, {
        timeoutMs: 20_000,
        password: PASSWORD
      }).then(
        () => 'connected',
        (error: Error) => error.message
      )
      expect(message).toMatch(
        /^RethinkDB at \S+ refused the login of user 'admin': Wrong password \(check the user and password of RETHINKDB_URL rethinkdb:\/\/127\.0\.0\.1:\d+\/app, or RETHINKDB_PASSWORD_FILE\)$/
      )
      expect(server.users).toContain('admin')
    } finally {
      server.close()
    }
  }, 30_000)
})

describe('RethinkDbStoreFactory', () => {
  it('creates one store per table of the URL database, with the id field asked for', async () => {
    const port = await closedPort()
    const factory = new RethinkDbStoreFactory(`rethinkdb://127.0.0.1:${port}/plumage`, { timeoutMs: 100 })
    const store = factory.create('messages', { id: '_id' }) as unknown as RethinkDbStore
    expect(store).toBeInstanceOf(RethinkDbStore)
    expect(store.id).toBe('_id')
    expect(store.table().toString()).toBe('r.db("plumage").table("messages")')
    expect(store.watch).toBeInstanceOf(Function)
    await factory.close()
  })

  it('fails setup with Unavailable when the database cannot be reached, and still closes', async () => {
    const port = await closedPort()
    const factory = new RethinkDbStoreFactory(`rethinkdb://127.0.0.1:${port}/plumage`, { timeoutMs: 100 })
    const store = factory.create('messages')
    await expect(store.setup!()).rejects.toBeInstanceOf(Unavailable)
    await expect(factory.close()).resolves.toBeUndefined()
  })
})
