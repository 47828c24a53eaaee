import { describe, expect, it } from '@jest/globals'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { ERROR_FIELDS, PinoLogger, SECRET_FIELDS } from '../../../src/infrastructure/logging/pino-logger.js'

/** A PinoLogger configured as fromConfig configures it, writing its lines into an array. */
function capture(): { logger: PinoLogger; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = []
  const stream = new Writable({ write: (chunk, _encoding, done) => (chunks.push(String(chunk)), done()) })
  const logger = new PinoLogger(pino({ level: 'info', redact: SECRET_FIELDS, serializers: ERROR_FIELDS }, stream))
  const lines = () =>
    chunks
      .join('')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
  return { logger, lines }
}

describe('PinoLogger', () => {
  it('logs an error under `error` with its type, message and stack, not as {}', () => {
    const { logger, lines } = capture()
    const error = Object.assign(new TypeError('the pool is closed'), { code: 'POOL_CLOSED' })
    logger.warn('a live query could not read its result again; retrying', { error })
    const [line] = lines()
    expect(line!.error).toMatchObject({ type: 'TypeError', message: 'the pool is closed', code: 'POOL_CLOSED' })
    expect(String((line!.error as { stack: string }).stack)).toContain('pino-logger.test.ts')
  })

  it('logs a value that is not an Error as it is', () => {
    const { logger, lines } = capture()
    logger.error('socket event failed', { error: { reason: 'plain object' } })
    expect(lines()[0]!.error).toEqual({ reason: 'plain object' })
  })

  it('fromConfig uses the same serializers', () => {
    const logger = PinoLogger.fromConfig({ logLevel: 'silent', env: 'test' })
    expect(Object.keys(logger.pino[pino.symbols.serializersSym as unknown as keyof typeof logger.pino] ?? {})).toEqual(
      expect.arrayContaining(['error', 'err'])
    )
  })
})
