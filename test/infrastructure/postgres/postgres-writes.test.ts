import { describe, expect, it } from '@jest/globals'
import type { PoolClient, QueryResult } from 'pg'
import { Unavailable } from '../../../src/domain/errors/errors.js'
import { silentLogger } from '../../../src/domain/logger.js'
import type { PostgresDatabase } from '../../../src/infrastructure/postgres/postgres-database.js'
import { PostgresWrites, type PostgresWrite } from '../../../src/infrastructure/postgres/postgres-writes.js'

// What PostgresWrites sends, and what each caller hears, against a stand-in database whose answers
// the test chooses: the cases a real server cannot be made to show on cue (a commit cut off).

interface Sent {
  /** Every statement, in order: on the batch's connection as it is, through the pool as `alone: …`. */
  statements: string[]
  /** The error each released connection was released with (undefined: back to the pool). */
  released: (Error | boolean | undefined)[]
}

/** A database whose statements answer one row each, except those `fail` throws for. */
function standIn(fail: (text: string) => Error | undefined): { db: PostgresDatabase; sent: Sent } {
  const sent: Sent = { statements: [], released: [] }
  const answer = async (text: string): Promise<QueryResult<{ doc: { text: string } }>> => {
    const error = fail(text)
    if (error) throw error
    return { rows: [{ doc: { text } }], rowCount: 1 }
  }
  const client = {
    query: (text: string) => {
      sent.statements.push(text)
      return answer(text)
    },
    release: (error?: Error | boolean) => sent.released.push(error)
  } as unknown as PoolClient
  const db = {
    logger: silentLogger,
    checkout: async () => client,
    on: (_client: PoolClient, text: string) => client.query(text),
    query: (_operation: string, text: string) => {
      sent.statements.push(`alone: ${text}`)
      return answer(text)
    }
  } as unknown as PostgresDatabase
  return { db, sent }
}

const write = (text: string, key: string | undefined = 'one record'): PostgresWrite => ({
  operation: 'things.patch',
  ...(key !== undefined ? { key } : {}),
  told: { updated: false, key: '' },
  several: false,
  run: async (statements) => {
    const { rows } = await statements.query<{ doc: { text: string } }>(text, [], true)
    return { rows, count: rows.length }
  }
})

/** Submits `first`, then `others` while it is in flight: they go together as one batch. */
async function batch(writes: PostgresWrites, first: string, others: string[]) {
  const lone = writes.write(write(first))
  const rest = others.map((text) => writes.write(write(text)).then((written) => written.rows[0]!.doc.text))
  await lone
  return Promise.allSettled(rest)
}

describe('PostgresWrites', () => {
  it('sends the writes that arrive meanwhile in one transaction, and tells the log once', async () => {
    const { db, sent } = standIn(() => undefined)
    let commits = 0
    const writes = new PostgresWrites(db, () => commits++)
    const outcomes = await batch(writes, 'first', ['a', 'b', 'c'])
    expect(outcomes.map((outcome) => (outcome as PromiseFulfilledResult<string>).value)).toEqual(['a', 'b', 'c'])
    expect(sent.statements).toEqual(['alone: first', 'BEGIN', 'a', 'b', 'c', 'COMMIT'])
    expect(sent.released).toEqual([undefined])
    expect(commits).toBe(2)
  })

  it('rolls a batch back when a write fails, and runs each write again alone', async () => {
    const refused = Object.assign(new Error('value too long'), { code: '22001' })
    const { db, sent } = standIn((text) => (text === 'b' ? refused : undefined))
    const writes = new PostgresWrites(db, () => undefined)
    const outcomes = await batch(writes, 'first', ['a', 'b', 'c'])
    expect(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : outcome.reason))).toEqual([
      'a',
      refused,
      'c'
    ])
    expect(sent.statements).toEqual(['alone: first', 'BEGIN', 'a', 'b', 'ROLLBACK', 'alone: a', 'alone: b', 'alone: c'])
    expect(sent.released).toEqual([undefined])
  })

  it('answers 503 to every caller when the COMMIT breaks with the connection, and runs nothing again', async () => {
    const cut = new Error('Connection terminated unexpectedly')
    const { db, sent } = standIn((text) => (text === 'COMMIT' ? cut : undefined))
    const writes = new PostgresWrites(db, () => undefined)
    const outcomes = await batch(writes, 'first', ['a', 'b'])
    for (const outcome of outcomes) expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(Unavailable)
    // It may have committed: sent again, a write could be made twice.
    expect(sent.statements).toEqual(['alone: first', 'BEGIN', 'a', 'b', 'COMMIT'])
    expect(sent.released).toEqual([cut])
  })

  it('runs a batch again alone when its COMMIT fails without losing the connection', async () => {
    const conflict = Object.assign(new Error('could not serialize access'), { code: '40001' })
    let commits = 0
    const { db, sent } = standIn((text) => (text === 'COMMIT' && commits++ === 0 ? conflict : undefined))
    const writes = new PostgresWrites(db, () => undefined)
    const outcomes = await batch(writes, 'first', ['a', 'b'])
    expect(outcomes.map((outcome) => (outcome as PromiseFulfilledResult<string>).value)).toEqual(['a', 'b'])
    expect(sent.statements).toEqual(['alone: first', 'BEGIN', 'a', 'b', 'COMMIT', 'alone: a', 'alone: b'])
  })

  it('sends writes of other records, and writes of no one record, alone and at once', async () => {
    const { db, sent } = standIn(() => undefined)
    const writes = new PostgresWrites(db, () => undefined)
    const texts = await Promise.all(
      [write('first', 'r1'), write('second', 'r2'), write('by query', undefined), write('third', 'r1')].map(
        async (each) => (await writes.write(each)).rows[0]!.doc.text
      )
    )
    expect(texts).toEqual(['first', 'second', 'by query', 'third'])
    // r1's second write waited for its first; the others did not wait at all.
    expect(sent.statements).toEqual(['alone: first', 'alone: second', 'alone: by query', 'alone: third'])
  })

  it('runs a write PostgreSQL rolled back to break a deadlock again, a few times, and no other failure', async () => {
    const failing = (code: string, times: number) => {
      let left = times
      return (text: string) => {
        if (!text.startsWith('deadlocked') || left-- <= 0) return undefined
        return Object.assign(new Error('deadlock detected'), { code })
      }
    }
    const once = standIn(failing('40P01', 1))
    const written = await new PostgresWrites(once.db, () => {}).write(write('deadlocked once'))
    expect(written.rows[0]!.doc.text).toBe('deadlocked once')
    expect(once.sent.statements).toEqual(['alone: deadlocked once', 'alone: deadlocked once'])
    // A serialization failure is rolled back whole too; a write that keeps losing is told after three runs again.
    const always = standIn(failing('40001', 10))
    await expect(new PostgresWrites(always.db, () => {}).write(write('deadlocked always'))).rejects.toThrow('deadlock')
    expect(always.sent.statements).toHaveLength(4)
    const refused = standIn(failing('23505', 1))
    await expect(new PostgresWrites(refused.db, () => {}).write(write('deadlocked: a taken key'))).rejects.toThrow()
    expect(refused.sent.statements).toHaveLength(1)
  })
})
