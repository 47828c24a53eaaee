import { describe, expect, it } from '@jest/globals'
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

describe('the RethinkDB store module\'s settings', () => {
  it('default to one local server, database plumage, 30 s, live tables of any layout, direct writes published', () => {
    expect(readRethinkDbSettings({})).toEqual({ url: 'rethinkdb://127.0.0.1:28015/plumage', db: 'plumage', timeoutMs: 30_000, directWrites: true })
    expect(readRethinkDbSettings({ RETHINKDB_URL: '', RETHINKDB_TIMEOUT: '', RETHINKDB_REPLICAS: '' })).toEqual(readRethinkDbSettings({}))
  })

  it('read RETHINKDB_URL as is, with its database', () => {
    expect(readRethinkDbSettings({ RETHINKDB_URL: 'rethinkdb://db:28015/chat' })).toMatchObject({ url: 'rethinkdb://db:28015/chat', db: 'chat' })
    expect(readRethinkDbSettings({ RETHINKDB_URL: 'rethinkdb://db' }).db).toBe('test')
  })

  it('accept the servers of a cluster, comma-separated', () => {
    expect(readRethinkDbSettings({ RETHINKDB_URL: 'rethinkdb://h1:28015,h2:28016,h3/chat' }).url).toBe('rethinkdb://h1:28015,h2:28016,h3/chat')
  })

  it('read the cluster and startup settings beside it', () => {
    expect(readRethinkDbSettings({ RETHINKDB_TIMEOUT: '5', RETHINKDB_REPLICAS: '3', RETHINKDB_SHARDS: '2', RETHINKDB_DIRECT_WRITES: 'false' })).toMatchObject({
      timeoutMs: 5_000, replicas: 3, shards: 2, directWrites: false
    })
    expect(failure({ RETHINKDB_REPLICAS: '0' }).message).toBe("RETHINKDB_REPLICAS must be an integer from 1 to 64 (got '0')")
    expect(failure({ RETHINKDB_SHARDS: '65' }).message).toBe("RETHINKDB_SHARDS must be an integer from 1 to 64 (got '65')")
    expect(failure({ RETHINKDB_TIMEOUT: 'soon' }).message).toBe("RETHINKDB_TIMEOUT must be an integer from 1 to 3600 (got 'soon')")
    expect(failure({ RETHINKDB_DIRECT_WRITES: 'maybe' }).message).toBe("RETHINKDB_DIRECT_WRITES must be true or false (got 'maybe')")
  })

  it('refuse a URL that is not rethinkdb://host[:port][/db]', () => {
    expect(failure({ RETHINKDB_URL: 'postgres://db/chat' }).message)
      .toBe("RETHINKDB_URL must look like rethinkdb://host:28015/db, or rethinkdb://host1:28015,host2:28015/db for a cluster (got 'postgres://db/chat')")
  })
})
