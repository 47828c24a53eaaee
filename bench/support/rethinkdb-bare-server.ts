import { createServer } from 'node:http'
import { connectRethinkDb } from '../../src/infrastructure/rethinkdb/rethinkdb-connection.js'
import { announce } from './seed.js'

/**
 * The anchor of the end-to-end write row of `npm run bench:rethinkdb`: a bare node:http server that answers
 * `POST /messages` with one durable insert (RethinkDB's default durability, 'hard') through rethinkdb-ts, on
 * the same pool settings as plumage (connectRethinkDb), into `messages` of the database in $RETHINKDB_URL
 * (made here). No authentication, no validation, no events: what the write itself costs over HTTP. A body that
 * is not a JSON object is a 400. Prints READY <port>.
 */
const url = process.env.RETHINKDB_URL
if (!url) throw new Error('RETHINKDB_URL must be set')
const connection = await connectRethinkDb(url, { timeoutMs: 10_000 })
const { r } = connection
const db = connection.db ?? 'test'
if (!((await r.dbList().run()) as string[]).includes(db)) await r.dbCreate(db).run()
if (!((await r.db(db).tableList().run()) as string[]).includes('messages')) await r.db(db).tableCreate('messages').run()
const table = r.db(db).table('messages')

const server = createServer((request, response) => {
  const answer = (status: number, body: unknown) => {
    const text = JSON.stringify(body)
    response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
    response.end(text)
  }
  if (request.method !== 'POST' || request.url !== '/messages') return answer(404, { message: 'Not found' })
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    let data: unknown
    try {
      data = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    } catch {
      return answer(400, { message: 'Invalid JSON' })
    }
    if (typeof data !== 'object' || data === null || Array.isArray(data))
      return answer(400, { message: 'Expected an object' })
    table
      .insert(data as Record<string, unknown>)
      .run()
      .then(
        (result) => answer(201, { ...data, id: result.generated_keys?.[0] }),
        (error: unknown) => answer(500, { message: error instanceof Error ? error.message : String(error) })
      )
  })
})
server.listen(0, '127.0.0.1', () => announce((server.address() as { port: number }).port))
process.on('SIGTERM', () => {
  server.close()
  void connection.close().finally(() => process.exit(0))
})
