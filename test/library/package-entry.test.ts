import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { execFile } from 'node:child_process'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'

/*
 * A project that depends on plumage: a throw-away package whose node_modules/plumage holds the
 * project's own package.json (its `exports` map) and the library as tsconfig.build.json compiles it,
 * JS and declarations. The consumer is TypeScript, type-checked against those declarations through
 * the `exports` map, then run by node: App + AdapterService + the memory store, from the package
 * names alone. Built under node_modules/.cache, so the library resolves the project's dependencies
 * and no other run's dist/ is touched.
 */
const run = promisify(execFile)
const root = process.cwd()
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
const project = join(root, 'node_modules', '.cache', `plumage-library-${process.pid}`)
const installed = join(project, 'node_modules', 'plumage')

const consumer = `import { AdapterService, App, NotFound, type HookContext, type Paginated } from 'plumage'
import { InMemoryStore } from 'plumage/memory'

type Todo = { id?: number; title: string }

const app = new App<{ todos: AdapterService<Todo> }>()
app.use('todos', new AdapterService<Todo>(new InMemoryStore(), { paginate: { default: 2 } }))
const todos = app.service('todos')
const trimTitle = (context: HookContext) => {
  const data = context.data as Todo
  context.data = { ...data, title: data.title.trim() }
}
todos.hooks({ before: { create: [trimTitle] } })
await app.setup()

await todos.create({ title: ' write the docs ' }) // through the hooks: trimmed
await todos._create({ title: ' skip the hooks ' }) // hook-less, as in Feathers
const page = (await todos.find({ query: { $sort: { id: 1 } } })) as Paginated<Todo>
const missing = await todos.get(99).catch((error: unknown) => error instanceof NotFound)
console.log(JSON.stringify({ page, missing }))
`

/** A PostgreSQL service from \`plumage/postgres\`, built without a server (the pool is made on first use). */
const postgresConsumer = `import { App } from 'plumage'
import { PostgresDatabase, PostgresStoreFactory, service, type PostgresService } from 'plumage/postgres'

type Todo = { id?: string; title: string }
const Model = new PostgresStoreFactory(new PostgresDatabase({ url: 'postgres://app@127.0.0.1:5432/app' }))
const app = new App<{ todos: PostgresService<Todo> }>()
app.use('todos', service<Todo>({ Model, name: 'todos', paginate: { default: 10, max: 50 } }))
const todos: PostgresService<Todo> = app.service('todos') as unknown as PostgresService<Todo>
console.log(JSON.stringify({ id: todos.id, paginate: todos.options.paginate, watches: typeof todos.watch }))
await Model.close()
`

/** A front end: the typed client with the reference app's Services, from the package alone. */
const frontEnd = `import { createClient, type Transport } from 'plumage/client'
import { userSchemas, type Services } from 'plumage/services'

const transport: Transport = { name: 'fake', call: async ({ data }) => ({ id: 1, ...(data as object) }) }
const users = createClient<Services>().configure((client) => (client.transport = transport)).service('users')
const user = await users.create({ email: 'ann@example.com', password: 'secret-pw' })
const email: string = user.email
// @ts-expect-error a user's role is one of the server's data schema (and only an admin may set one)
await users.create({ email: 'bob@example.com', password: 'secret-pw', role: 'root' })
console.log(JSON.stringify({ email, required: userSchemas.data.required }))
`

/** Runs TypeScript's compiler with these arguments, in `cwd`. */
const compile = (args: string[], cwd = root) => run(process.execPath, [tsc, ...args], { cwd })

type ExportsMap = Record<string, string | { types: string; default: string }>
let exports: ExportsMap

beforeAll(async () => {
  exports = (JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { exports: ExportsMap }).exports
  await mkdir(installed, { recursive: true })
  await writeFile(join(installed, 'package.json'), await readFile(join(root, 'package.json')))
  // The library as the build compiles it (tsconfig.build.json's settings), only elsewhere and only
  // the entries the exports map names (with what they import), which is all a dependent loads, and
  // the ambient declarations the build finds in src (pg.d.ts: the part of node-postgres plumage uses).
  const sources = [
    ...Object.values(exports)
      .filter((target) => typeof target !== 'string')
      .map(({ types }) => join(root, types.replace(/^\.\/dist\/lib\//, 'src/').replace(/\.d\.ts$/, '.ts'))),
    join(root, 'src', 'infrastructure', 'postgres', 'pg.d.ts')
  ]
  await writeFile(
    join(project, 'tsconfig.library.json'),
    JSON.stringify({
      extends: join(root, 'tsconfig.build.json'),
      compilerOptions: { rootDir: join(root, 'src'), outDir: join(installed, 'dist', 'lib') },
      include: [],
      files: sources
    })
  )
  await compile(['-p', join(project, 'tsconfig.library.json')])
  await writeFile(join(project, 'package.json'), JSON.stringify({ type: 'module', dependencies: { plumage: '*' } }))
  await writeFile(join(project, 'consumer.ts'), consumer)
  await writeFile(join(project, 'front-end.ts'), frontEnd)
  await writeFile(join(project, 'postgres-consumer.ts'), postgresConsumer)
  await writeFile(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'nodenext', strict: true, skipLibCheck: true },
      files: ['consumer.ts', 'front-end.ts', 'postgres-consumer.ts']
    })
  )
}, 300_000)

afterAll(() => rm(project, { recursive: true, force: true }))

describe('plumage as a dependency', () => {
  it('type-checks a consumer against the declarations its exports map names, and runs it', async () => {
    // Fails (and shows the compiler's message) when an entry or its `types` is missing or wrong.
    await compile(['-p', 'tsconfig.json'], project)
    const { stdout } = await run(process.execPath, ['consumer.js'], { cwd: project })
    expect(JSON.parse(stdout)).toEqual({
      page: {
        total: 2,
        limit: 2,
        skip: 0,
        data: [
          { id: 0, title: 'write the docs' },
          { id: 1, title: ' skip the hooks ' }
        ]
      },
      missing: true
    })
  }, 120_000)

  it("types a front end with the typed client and the reference app's Services, and runs it", async () => {
    await compile(['-p', 'tsconfig.json'], project)
    const { stdout } = await run(process.execPath, ['front-end.js'], { cwd: project })
    expect(JSON.parse(stdout)).toEqual({ email: 'ann@example.com', required: ['email', 'password'] })
  }, 120_000)

  it('types a PostgreSQL service from plumage/postgres, and runs it', async () => {
    await compile(['-p', 'tsconfig.json'], project)
    const { stdout } = await run(process.execPath, ['postgres-consumer.js'], { cwd: project })
    expect(JSON.parse(stdout)).toEqual({ id: 'id', paginate: { default: 10, max: 50 }, watches: 'function' })
  }, 120_000)

  it('resolves every entry of the exports map to built JS and declarations', async () => {
    const entries = Object.entries(exports).filter(([, target]) => typeof target !== 'string')
    expect(entries.map(([name]) => name)).toEqual(
      expect.arrayContaining([
        '.',
        './memory',
        './rethinkdb',
        './postgres',
        './testing',
        './client',
        './server',
        './fastify',
        './services'
      ])
    )
    for (const [name, target] of entries) {
      const { types, default: js } = target as { types: string; default: string }
      await expect(readFile(join(installed, types), 'utf8')).resolves.toContain('export')
      const specifier = name === '.' ? 'plumage' : `plumage/${name.slice(2)}`
      const { stdout } = await run(
        process.execPath,
        ['--input-type=module', '-e', `console.log(Object.keys(await import('${specifier}')).length)`],
        { cwd: project }
      )
      expect(Number(stdout)).toBeGreaterThan(0)
      expect(js.replace(/\.js$/, '.d.ts')).toBe(types)
    }
  }, 120_000)
})
