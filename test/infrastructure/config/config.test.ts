import { describe, expect, it } from '@jest/globals'
import { ConfigError, loadConfig, type Config } from '../../../src/infrastructure/config/config.js'

/** Loads with one variable set (on top of NODE_ENV=test so production rules stay out of the way). */
const load = (env: Record<string, string>): Config => loadConfig({ NODE_ENV: 'test', ...env })

/** The error loading throws: always a ConfigError whose message starts with the variable's name. */
function failure(env: Record<string, string>): ConfigError {
  try {
    load(env)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return error as ConfigError
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`)
}

describe('loadConfig defaults', () => {
  it('gives a development app on 127.0.0.1:3030 with the memory store when nothing is set', () => {
    expect(loadConfig({})).toEqual({
      env: 'development',
      port: 3030,
      host: '127.0.0.1',
      http: 'express',
      idempotency: true,
      idempotencyRetentionMs: 86_400_000,
      realtime: 'socketio',
      store: 'memory',
      authSecret: undefined,
      jwtExpiresIn: '15m',
      jwtExpiresInMs: 900_000,
      liveQueries: true,
      refreshTokenExpiresInMs: 30 * 86_400_000,
      refreshTokenReuseWindowMs: 30_000,
      loginMaxFailures: 10,
      loginAddressMaxFailures: 50,
      loginFailureWindowMs: 900_000,
      loginFreeFailures: 3,
      bcryptRounds: 10,
      corsOrigins: [],
      compression: false,
      requestLog: false,
      staticDir: 'public',
      logLevel: 'info',
      bodyLimit: '100kb',
      socketMaxMessageSize: 1_000_000,
      socketMaxConcurrentCalls: 100,
      socketMaxBufferedBytes: 4_194_304,
      socketRecoveryWindowMs: 120_000,
      apiDocs: true,
      metrics: true,
      metricsToken: undefined,
      sessions: true,
      tracing: false
    })
  })

  it('treats an empty variable like an unset one', () => {
    expect(
      loadConfig({ PORT: '', STORE: '', LOG_LEVEL: '', BCRYPT_ROUNDS: '', COMPRESSION: '', HOST: '' })
    ).toMatchObject({
      port: 3030,
      store: 'memory',
      logLevel: 'info',
      bcryptRounds: 10,
      compression: false,
      host: '127.0.0.1'
    })
  })

  it('reads process.env when no environment is passed', () => {
    expect(loadConfig().port).toBe(process.env.PORT ? Number(process.env.PORT) : 3030)
  })
})

/*
 * One row per variable: a valid value with what it becomes, and an invalid value with the start of
 * the one message that names the variable.
 */
const variables: [name: string, valid: string, expected: Partial<Config>, invalid: string, message: RegExp][] = [
  [
    'NODE_ENV',
    'production',
    { env: 'production' },
    'staging',
    /^NODE_ENV must be one of development, production, test \(got 'staging'\)$/
  ],
  ['PORT', '8080', { port: 8080 }, '80a', /^PORT must be an integer from 0 to 65535 \(got '80a'\)$/],
  ['HOST', '0.0.0.0', { host: '0.0.0.0' }, 'local host', /^HOST must be a host name or IP address/],
  [
    'AUTH_SECRET',
    'a-secret-of-32-characters-or-so!',
    { authSecret: 'a-secret-of-32-characters-or-so!' },
    'short',
    /^AUTH_SECRET must be at least 16 characters long$/
  ],
  [
    'JWT_EXPIRES_IN',
    '12h',
    { jwtExpiresIn: '12h', jwtExpiresInMs: 12 * 3_600_000 },
    'tomorrow',
    /^JWT_EXPIRES_IN must be a duration such as 1d, 12h or 3600s \(got 'tomorrow'\)$/
  ],
  [
    'REFRESH_TOKEN_EXPIRES_IN',
    '7d',
    { refreshTokenExpiresInMs: 7 * 86_400_000 },
    '0d',
    /^REFRESH_TOKEN_EXPIRES_IN must be a duration such as 30d, 12h or 900s \(got '0d'\)$/
  ],
  [
    'REFRESH_TOKEN_REUSE_WINDOW',
    '0',
    { refreshTokenReuseWindowMs: 0 },
    'soon',
    /^REFRESH_TOKEN_REUSE_WINDOW must be a duration such as 30d, 12h or 900s, or 0 \(every reuse revokes\) \(got 'soon'\)$/
  ],
  [
    'LOGIN_MAX_FAILURES',
    '0',
    { loginMaxFailures: 0 },
    '-1',
    /^LOGIN_MAX_FAILURES must be an integer from 0 to 1000000 \(got '-1'\)$/
  ],
  [
    'LOGIN_FAILURE_WINDOW',
    '1h',
    { loginFailureWindowMs: 3_600_000 },
    'soon',
    /^LOGIN_FAILURE_WINDOW must be a duration such as 30d, 12h or 900s \(got 'soon'\)$/
  ],
  [
    'LOGIN_MAX_FAILURES_PER_ADDRESS',
    '200',
    { loginAddressMaxFailures: 200 },
    '0',
    /^LOGIN_MAX_FAILURES_PER_ADDRESS must be an integer from 1 to 1000000 \(got '0'\)$/
  ],
  [
    'LOGIN_FREE_FAILURES',
    '5',
    { loginFreeFailures: 5 },
    'x',
    /^LOGIN_FREE_FAILURES must be an integer from 0 to 1000000 \(got 'x'\)$/
  ],
  ['BCRYPT_ROUNDS', '12', { bcryptRounds: 12 }, '3', /^BCRYPT_ROUNDS must be an integer from 4 to 15 \(got '3'\)$/],
  [
    'CORS_ORIGINS',
    'https://a.example, http://localhost:5173',
    { corsOrigins: ['https://a.example', 'http://localhost:5173'] },
    'a.example',
    /^CORS_ORIGINS must be \* or comma-separated origins/
  ],
  [
    'LOG_LEVEL',
    'debug',
    { logLevel: 'debug' },
    'verbose',
    /^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent \(got 'verbose'\)$/
  ],
  ['COMPRESSION', 'true', { compression: true }, 'maybe', /^COMPRESSION must be true or false \(got 'maybe'\)$/],
  ['REQUEST_LOG', 'on', { requestLog: true }, '2', /^REQUEST_LOG must be true or false \(got '2'\)$/],
  [
    'BODY_LIMIT',
    '1mb',
    { bodyLimit: '1mb' },
    'lots',
    /^BODY_LIMIT must be a size such as 100kb or 1mb \(got 'lots'\)$/
  ],
  [
    'SOCKET_MAX_MESSAGE_SIZE',
    '2048',
    { socketMaxMessageSize: 2048 },
    '10',
    /^SOCKET_MAX_MESSAGE_SIZE must be an integer from 1024 to 2147483647 \(got '10'\)$/
  ],
  [
    'SOCKET_MAX_CONCURRENT_CALLS',
    '5',
    { socketMaxConcurrentCalls: 5 },
    '0',
    /^SOCKET_MAX_CONCURRENT_CALLS must be an integer from 1 to 100000 \(got '0'\)$/
  ],
  ['METRICS', 'false', { metrics: false }, 'sometimes', /^METRICS must be true or false \(got 'sometimes'\)$/],
  // The refused token is not echoed: it is a secret, however mistyped.
  [
    'METRICS_TOKEN',
    'c2VjcmV0LXRva2Vu==',
    { metricsToken: 'c2VjcmV0LXRva2Vu==' },
    'two words',
    /^METRICS_TOKEN must be a bearer token: [^']*\(its value is not shown\)$/
  ],
  [
    'SOCKET_RECOVERY_WINDOW',
    '0',
    { socketRecoveryWindowMs: 0 },
    '2m',
    /^SOCKET_RECOVERY_WINDOW must be an integer from 0 to 86400 \(got '2m'\)$/
  ]
]

describe.each(variables)('%s', (name, valid, expected, invalid, message) => {
  it(`accepts ${JSON.stringify(valid)}`, () => {
    const extra: Record<string, string> = name === 'NODE_ENV' ? { AUTH_SECRET: 'production-secret-0123456789' } : {}
    expect(load({ ...extra, [name]: valid })).toMatchObject(expected)
  })

  it(`refuses ${JSON.stringify(invalid)} with one message naming ${name}`, () => {
    const error = failure({ [name]: invalid })
    expect(error.message).toMatch(message)
    expect(error.message).not.toContain('\n')
  })
})

describe('STORE', () => {
  it('is read as any name: the composition root checks it against its store modules (test/container.test.ts)', () => {
    expect(load({ STORE: 'rethinkdb' }).store).toBe('rethinkdb')
    expect(load({ STORE: 'mongodb' }).store).toBe('mongodb')
  })

  it('leaves the settings of store adapters to their modules', () => {
    expect(
      Object.keys(load({ STORE: 'rethinkdb', RETHINKDB_URL: 'rethinkdb://db:28015/chat' })).filter((key) =>
        /rethinkdb/i.test(key)
      )
    ).toEqual([])
  })
})

describe('rules across variables', () => {
  it('refuses NODE_ENV=production without AUTH_SECRET', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(
      new ConfigError('AUTH_SECRET must be set when NODE_ENV=production')
    )
  })

  it('accepts * as the CORS origin and drops empty entries', () => {
    expect(load({ CORS_ORIGINS: '*' }).corsOrigins).toEqual(['*'])
    expect(load({ CORS_ORIGINS: ' https://a.example ,, ' }).corsOrigins).toEqual(['https://a.example'])
  })

  it('turns static file serving off with an empty STATIC_DIR and serves any other directory', () => {
    expect(load({ STATIC_DIR: '' }).staticDir).toBeUndefined()
    expect(load({ STATIC_DIR: '/srv/www' }).staticDir).toBe('/srv/www')
  })

  it('accepts every flag spelling and port 0 (any free port)', () => {
    for (const on of ['1', 'true', 'YES', 'on']) expect(load({ COMPRESSION: on }).compression).toBe(true)
    for (const off of ['0', 'false', 'No', 'off']) expect(load({ COMPRESSION: off }).compression).toBe(false)
    expect(load({ PORT: '0' }).port).toBe(0)
  })
})
