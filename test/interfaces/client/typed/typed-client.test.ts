import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { createClient } from '../../../../src/interfaces/client/client-app.js'
import type { ServiceCall } from '../../../../src/domain/service/service.js'
import type { Services } from '../../../../src/reference-services.js'

/*
 * The typed client's type tests are typed-client.fixture.ts, which only the compiler checks: each
 * `@ts-expect-error` line must be an error (tsc reports an unused one) and each `Same<A, B>` must
 * hold. Here tsc checks that file alone, so a failure names it; and a typed client does at runtime
 * what the untyped one does.
 */
const run = promisify(execFile)
const root = process.cwd()
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
let dir: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'plumage-typed-client-'))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

describe('typed client', () => {
  it('compiles the type tests: wrong data, queries, events and methods are errors; results are typed', async () => {
    const config = join(dir, 'tsconfig.json')
    await writeFile(
      config,
      JSON.stringify({
        extends: join(root, 'tsconfig.json'),
        compilerOptions: { noEmit: true, typeRoots: [join(root, 'node_modules', '@types')] },
        include: [],
        files: [join(root, 'test', 'interfaces', 'client', 'typed', 'typed-client.fixture.ts')]
      })
    )
    const result = await run(process.execPath, [tsc, '-p', config], { cwd: root }).then(
      () => '',
      (error: { stdout: string }) => error.stdout
    )
    expect(result).toBe('')
  }, 120_000)

  it('is the untyped client at runtime: same calls, same results, events', async () => {
    const calls: ServiceCall[] = []
    const client = createClient<Services>().configure((app) => {
      app.transport = {
        name: 'fake',
        async call(call) {
          calls.push(call)
          return { id: 1, text: 'hi' }
        }
      }
    })
    const created: unknown[] = []
    client.service('messages').on('created', (message) => created.push(message.text))
    expect(await client.service('messages').create({ text: 'hi' })).toEqual({ id: 1, text: 'hi' })
    expect(client.service('messages')).toBe(client.service('/messages/'))
    await client.service('users').find({ query: { email: 'ann@example.com' } })
    expect(calls).toEqual([
      { path: 'messages', method: 'create', id: undefined, data: { text: 'hi' }, params: {} },
      { path: 'users', method: 'find', id: undefined, data: undefined, params: { query: { email: 'ann@example.com' } } }
    ])
    expect(created).toEqual(['hi'])
  })

  it("iterates every record of a cursor walk, page after page, typed as the service's records", async () => {
    const queries: unknown[] = []
    const pages: Record<string, { data: { id: number; text: string }[]; next: string | null }> = {
      '': { data: [{ id: 1, text: 'a' }], next: 'c1' },
      c1: { data: [{ id: 2, text: 'b' }], next: null }
    }
    const client = createClient<Services>()
    client.transport = {
      name: 'fake',
      async call(call) {
        const query = call.params.query as { $after: string }
        queries.push(query)
        return { limit: 1, skip: 0, prev: null, ...pages[query.$after] }
      }
    }
    const texts: string[] = []
    for await (const message of client.service('messages').iterate({ userId: 3, $limit: 1 })) texts.push(message.text)
    expect(texts).toEqual(['a', 'b'])
    expect(queries).toEqual([
      { $count: false, userId: 3, $limit: 1, $after: '' },
      { $count: false, userId: 3, $limit: 1, $after: 'c1' }
    ])
  })

  it('adds the custom methods the types declare, called as on the untyped client', async () => {
    type Todo = { id: number; title: string }
    const calls: ServiceCall[] = []
    const client = createClient<{ todos: { result: Todo; methods: { archive(data: { before: string }): Todo[] } } }>()
    client.transport = {
      name: 'fake',
      async call(call) {
        calls.push(call)
        return [{ id: 1, title: 'old' }]
      }
    }
    const todos = client.service('todos').methods('archive')
    const archived = await todos.archive({ before: '2026-01-01' })
    expect(archived.map((todo) => todo.title)).toEqual(['old'])
    expect(calls).toEqual([
      { path: 'todos', method: 'archive', id: undefined, data: { before: '2026-01-01' }, params: {} }
    ])
  })
})
