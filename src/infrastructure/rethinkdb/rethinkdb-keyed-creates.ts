import type { R, RDatum, RTable, WriteResult } from 'rethinkdb-ts'
import type { Data } from '../../domain/service/service.js'
import type { EventLog } from './event-log.js'
import { markedRecords, serverMs, type Term } from './event-log-writes.js'
import { reqlOf } from './rethinkdb-driver.js'
import type { KeyRow } from './rethinkdb-keyed-writes.js'
import { splitInsert, type InsertOutcome } from './record-keys.js'

/** A keyed create in a grouped insert: its key's row id, the claim drawn for this try, the request's digest. */
export interface KeyedCreate {
  key: string
  claim: string
  fingerprint: string
  retentionMs: number
}

/** What the grouped insert answers: the insert's result, the claims that wrote, the key rows of the others. */
export interface GroupedAnswer {
  result: WriteResult<Data>
  /** The claims of the keyed creates that claimed their key and were written (their outcome is the insert's). */
  writers: string[]
  /** The key rows of the keyed creates that did not write, by key row id: a repeat's answer, or a key in flight. */
  held: Record<string, KeyRow>
}

/** A grouped create's outcome: its insert's, or for a keyed one that did not write, its key's row. */
export type CreateOutcome = InsertOutcome | { key: KeyRow }

/** The keys' table and the event log of a database (RethinkDbKeyedWrites.tables). */
export interface KeyedTables {
  r: R
  keys: RTable<KeyRow>
  events?: EventLog
  logTable?: RTable<Data>
  /** The grouped insert's query functions built so far (queryFunction), per store and tracing. */
  built: Map<string, Term>
}

/** The store's table, its id field and name (the log rows' `table`). */
export interface InsertTarget {
  table: RTable<Data>
  idField: string
  tableName: string
}

type GroupedInsertOptions = KeyedTables & InsertTarget
/** A grouped insert's tables, and its unkeyed records and the writer's trace as the query function's variables. */
type Batch = GroupedInsertOptions & { plain: Term; trace: Term | null }

/**
 * A grouped insert with keyed creates (groupedInsert) and each caller's outcome: its insert's, or for a keyed create
 * that did not write, its key's row. A keyed create that gives an id another call of the batch gives too goes alone
 * after it (its answer is known by its ids).
 */
export async function insertKeyed(
  tables: KeyedTables,
  target: InsertTarget,
  calls: Data[][],
  tags: (KeyedCreate | undefined)[]
): Promise<CreateOutcome[]> {
  const { idField } = target
  const given = new Map<string, number>()
  for (const record of calls.flat()) {
    const key = JSON.stringify(record[idField] ?? null)
    given.set(key, (given.get(key) ?? 0) + 1)
  }
  const alone = calls.map(
    (records, index) =>
      tags[index] !== undefined && records.some((record) => given.get(JSON.stringify(record[idField]))! > 1)
  )
  const now = calls.flatMap((_, index) => (alone[index] ? [] : [index]))
  const nowCalls = now.map((index) => calls[index]!)
  const answer = await groupedInsert(
    { ...tables, ...target },
    nowCalls,
    now.map((index) => tags[index])
  ).run()
  const split = splitInsert(nowCalls, answer.result, idField)
  const outcomes: CreateOutcome[] = []
  now.forEach((index, at) => {
    const tag = tags[index]
    if (tag && !answer.writers.includes(tag.claim)) return (outcomes[index] = { key: answer.held[tag.key]! })
    outcomes[index] = split[at]!
  })
  for (const [index, records] of calls.entries())
    if (alone[index]) outcomes[index] = (await insertKeyed(tables, target, [records], [tags[index]]))[0]!
  return outcomes
}

/**
 * One insert of several callers' records, some keyed (`tags[i]`: caller i's key), as ONE query (ADR 0020):
 *
 * 1. claims every key of the batch in one `insert` into the keys' table whose conflict function keeps a live row
 *    (atomic per row: of concurrent repeats, in any number of processes and batches, exactly one claims a key);
 * 2. of the keys it claimed, those with a log row within their retention (the soft claim lost in a server crash,
 *    the hard log row kept) are not written: their rows are made again from the log row;
 * 3. inserts the unkeyed records and those of the keyed creates that claimed, and logs them in one log row that
 *    lists their keys (`keys`, the log's multi index) and marks (key, claim, digest, their records' ids);
 * 4. deletes the claims whose records did not all go in (a failed create keeps no key). The others' answers stay in
 *    the log row, their commit: a repeat (or the kit's `answer`) copies one to its key's row from there, and the log's
 *    pruning copies those still missing before it deletes the row (EventLogWrites.keepAnswers). Copying them in the
 *    query cost every keyed create one more write. Without the event log, each key's row is written with its answer,
 *    hard, in one `insert` (that row is then the commit).
 *
 * The query's function is built once per store and tracing (queryFunction) and each batch sends only its data:
 * building its ~250 terms with rethinkdb-ts for every batch cost 3 ms of the instance's CPU (as the event log's
 * recorder, EventLogWrites.recorder). Every record of a keyed create has its id before the query (the store draws
 * the missing ones), so its answer is known among the row's events by id.
 */
export function groupedInsert(options: GroupedInsertOptions, calls: Data[][], tags: (KeyedCreate | undefined)[]) {
  const { r, events, idField } = options
  const plain = calls.filter((_, index) => tags[index] === undefined).flat()
  const tagged = tags.flatMap((tag, index) =>
    tag
      ? [
          {
            key: tag.key,
            claim: tag.claim,
            fingerprint: tag.fingerprint,
            retention: tag.retentionMs / 1000,
            ids: calls[index]!.map((record) => record[idField]),
            records: calls[index]!
          }
        ]
      : []
  )
  // A key twice in one batch (concurrent repeats in this process): the first claims it, the other waits as a repeat.
  const first = new Set<string>()
  const claims = tagged
    .filter((call) => !first.has(call.key) && first.add(call.key))
    .map((call) => ({ id: call.key, fingerprint: call.fingerprint, claim: call.claim, retention: call.retention }))
  const trace = events?.traceparent()
  const args = [plain, tagged, claims, ...(trace === undefined ? [] : [trace])].map((value) => r.expr(value))
  return r.do(...(args as [Term]), queryFunction(options, trace !== undefined)) as unknown as RDatum<GroupedAnswer>
}

/** The grouped insert's query, as a ReQL function of its data (plain, tagged, claims[, trace]), built once. */
function queryFunction(options: GroupedInsertOptions, traced: boolean): Term {
  const key = `${traced ? 'traced' : 'plain'}\u0000${options.idField}\u0000${options.tableName}`
  let built = options.built.get(key)
  if (built) return built
  const { r } = options
  const query = (plain: Term, tagged: Term, claims: Term, trace: Term | null) =>
    claim({ ...options, plain, trace }, tagged, claims)
  const call = traced
    ? r.do(null, null, null, null, (plain: Term, tagged: Term, claims: Term, trace: Term) =>
        query(plain, tagged, claims, trace)
      )
    : r.do(null, null, null, (plain: Term, tagged: Term, claims: Term) => query(plain, tagged, claims, null))
  // The call's term is [FUNCALL, [function, ...arguments]]: the function alone is kept.
  const [, [func]] = JSON.parse(r.serialize(call)) as [number, [unknown]]
  built = reqlOf(func)
  options.built.set(key, built)
  return built
}

/** Step 1: the claims, and which tagged calls won theirs. */
function claim(options: Batch, tagged: Term, claims: Term): Term {
  const { r, keys } = options
  const claimed = keys.insert(
    claims.map((row: Term) => row.without('retention').merge({ expiresAt: r.now().add(row('retention')) })) as never,
    {
      conflict: (_id: Term, old: Term, fresh: Term) => r.branch(old('expiresAt').gt(r.now()), old, fresh),
      returnChanges: 'always',
      durability: 'soft'
    } as never
  ) as unknown as Term
  return claimed.do((result: Term) =>
    r.branch(
      result('errors').gt(0),
      r.error(result('first_error')),
      r.do(
        result('changes')
          .map((change: Term) => [change('new_val')('id'), change('new_val')])
          .coerceTo('object'),
        (rows: Term) =>
          r.do(
            tagged.filter((call: Term) => rows(call('key'))('claim').eq(call('claim'))),
            (won: Term) => recover(options, won, rows)
          )
      )
    )
  )
}

/** Step 2: the claims made again from their log rows, then the write of the others. */
function recover(options: Batch, won: Term, rows: Term): Term {
  const { r } = options
  const logged: Term = options.logTable
    ? r.branch(
        won.isEmpty(),
        r.expr([]),
        options.logTable
          .getAll(r.args(won.map((call: Term) => call('key'))) as never, { index: 'keys' })
          .coerceTo('array')
      )
    : r.expr([])
  return r.do(logged, (logged: Term) =>
    r.branch(
      // No key of the batch has a log row (the usual case): every claim that won writes.
      logged.isEmpty(),
      write(options, won, rows, rows),
      remake(options, won, rows, logged)
    )
  )
}

/** Step 2 when some keys have log rows: those within their retention are made again from them, the others write. */
function remake(options: Batch, won: Term, rows: Term, logged: Term): Term {
  const { r, keys } = options
  return r.do(
    won.map((call: Term) =>
      call.merge({
        logged: logged
          .filter((row: Term) =>
            row('keys')
              .contains(call('key'))
              .and(row('ts').gt(serverMs(r).sub(call('retention').mul(1000))))
          )
          .orderBy(r.desc('id'))
          .nth(0)
          .default(null)
      })
    ),
    (won: Term) =>
      r.do(
        won.filter((call: Term) => call('logged').ne(null)).map((call: Term) => remade(r, call)),
        won.filter((call: Term) => call('logged').eq(null)).without('logged'),
        (again: Term, writers: Term) =>
          again
            .forEach((row: Term) =>
              keys.get(row('id')).replace((key: Term) => r.branch(key('claim').eq(row('by')), row.without('by'), key))
            )
            .do(() =>
              write(
                options,
                writers,
                rows,
                rows.merge(again.map((row: Term) => [row('id'), row.without('by')]).coerceTo('object'))
              )
            )
      )
  )
}

/** A key's row made again from its log row (`by`: the claim it replaces). */
function remade(r: R, call: Term): Term {
  const row = call('logged')
  const mark = row('marks')
    .filter((mark: Term) => mark('key').eq(call('key')))
    .nth(0)
  return {
    id: call('key'),
    fingerprint: mark('fingerprint'),
    claim: mark('claim'),
    expiresAt: r.epochTime(row('ts').div(1000)).add(call('retention')),
    answer: markedRecords(r, row, mark),
    by: call('claim')
  } as unknown as Term
}

/** Steps 3 and 4 (`rows`: the claimed keys' rows; `held`: the keys' rows a repeat answers from). */
function write(options: Batch, writers: Term, rows: Term, held: Term): Term {
  const { r, keys, events, table, tableName, idField, plain, trace } = options
  const insert = table.insert(plain.add(writers.concatMap((call: Term) => call('records')) as never) as never, {
    returnChanges: true
  }) as unknown as RDatum<WriteResult<Data>>
  const marks = writers.map((call: Term) => call.pluck('key', 'claim', 'fingerprint', 'ids').merge({ field: idField }))
  const logged = events
    ? events.recording(insert, { name: tableName, term: table, idField }, 'created', marks, trace)
    : insert
  // With the event log, the log row is the commit of its keys; without it, each key's row written with its answer.
  const commit = (done: Term, result: Term) =>
    (events ? r.expr(null) : answers(options, done, rows)).do(() => ({
      result,
      writers: done.map((call: Term) => call('claim')),
      held
    }))
  return logged.do((result: Term) =>
    r.branch(
      // No record refused (the usual case): every keyed create wrote its records as given (their ids drawn).
      result('errors').eq(0),
      commit(
        writers.map((call: Term) => call.merge({ answer: call('records') })),
        result
      ),
      r.do(
        result('changes')
          .default([])
          .filter((change: Term) => change.hasFields('error').not().and(change('new_val').default(null).ne(null)))
          .map((change: Term) => change('new_val')),
        (created: Term) =>
          r.do(
            writers.map((call: Term) =>
              call.merge({ answer: created.filter((record: Term) => call('ids').contains(record(idField))) })
            ),
            (writers: Term) =>
              writers
                .filter((call: Term) => call('answer').count().ne(call('ids').count()))
                .forEach((call: Term) =>
                  keys.get(call('key')).replace((key: Term) => r.branch(key('claim').eq(call('claim')), null, key), {
                    durability: events ? 'soft' : 'hard'
                  })
                )
                .do(() =>
                  commit(
                    writers.filter((call: Term) => call('answer').count().eq(call('ids').count())),
                    result
                  )
                )
          )
      )
    )
  )
}

/**
 * Without the event log: the answers of the creates that wrote (`done`), each its key's row written whole with its
 * answer, hard (that row is the commit), in one insert whose conflict function keeps a row claimed anew.
 */
function answers(options: Batch, done: Term, rows: Term): Term {
  const { r, keys } = options
  return r.branch(
    done.isEmpty(),
    null,
    keys.insert(
      done.map((call: Term) => rows(call('key')).merge({ answer: call('answer') })) as never,
      {
        conflict: (_id: Term, old: Term, fresh: Term) => r.branch(old('claim').eq(fresh('claim')), fresh, old)
      } as never
    )
  )
}
