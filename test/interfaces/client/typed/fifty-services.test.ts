import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

/*
 * What the typed client costs the compiler: 50 generated services, each with its own schemas (as the
 * reference app declares them), a Services map of SchemaTypes, and a client that calls every service
 * (a query, a create, a patch, an event). tsc --extendedDiagnostics reports the instantiations and the
 * check time; the same program on the untyped client is the baseline. The bound is on instantiations,
 * which are deterministic; the time is reported in BENCHMARKS.md ("Typed client"), not asserted.
 */
const SERVICES = 50
/** Measured: ~630 instantiations per service over the untyped baseline (BENCHMARKS.md); this leaves room. */
const MAX_INSTANTIATIONS_PER_SERVICE = 1_000

const run = promisify(execFile)
const root = process.cwd()
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
const client = join(root, 'src', 'interfaces', 'client')
let dir: string

/** One service's schemas: a record with fields of every kind, server-owned ids, a query schema. */
const schemaModule = (index: number) => `import type { ServiceSchemas } from '${root}/src/domain/schema/json-schema.js'

const id = { type: ['integer', 'string'] } as const
const name = { type: 'string', minLength: 1, maxLength: 100, transform: ['trim'] } as const
const count = { type: 'integer', minimum: 0 } as const
const done = { type: 'boolean' } as const
const at = { type: 'string', format: 'date-time' } as const
const kind = { enum: ['a', 'b', 'c'] } as const
const tags = { type: 'array', items: { type: 'string' } } as const

export const record${index} = {
  $id: 'Record${index}',
  type: 'object',
  properties: { id, name, count, done, at, kind, tags },
  required: ['id', 'name'],
  additionalProperties: false
} as const

export const schemas${index} = {
  result: record${index},
  data: {
    type: 'object',
    properties: { id: false, name, count, done, kind, tags },
    required: ['name'],
    additionalProperties: false
  },
  query: { type: 'object', properties: { id, name, count, done, at, kind }, additionalProperties: false }
} as const satisfies ServiceSchemas
`

const indexes = Array.from({ length: SERVICES }, (_, index) => index)

/** The client program: every service called once per method kind; typed or not. */
const clientModule = (typed: boolean) => `import { createClient } from '${client}/client-app.js'
${typed ? `import type { SchemaTypes } from '${client}/schema-types.js'` : ''}
${typed ? indexes.map((i) => `import type { schemas${i} } from './services/s${i}.js'`).join('\n') : ''}

${typed ? `interface Services {\n${indexes.map((i) => `  s${i}: SchemaTypes<typeof schemas${i}, { paginate: true }>`).join('\n')}\n}` : ''}

const app = createClient${typed ? '<Services>' : ''}()

export async function useAll() {
  const names: unknown[] = []
${indexes
  .map(
    (i) => `  const s${i} = app.service('s${i}')
  names.push(await s${i}.find({ query: { count: { $gt: 1 }, $sort: { name: 1 }, $limit: 5 } }))
  names.push(await s${i}.create({ name: 'x', count: ${i}, kind: 'a' }))
  names.push(await s${i}.patch(1, { done: true }))
  s${i}.on('created', (record) => names.push(${typed ? 'record' : '(record as { name: string })'}.name))`
  )
  .join('\n')}
  return names
}
`

/** Compiles one program with tsc --extendedDiagnostics: its error output, instantiations and check time. */
async function diagnose(file: string) {
  const config = join(dir, `tsconfig.${file}.json`)
  await writeFile(
    config,
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'nodenext',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: [],
        typeRoots: [join(root, 'node_modules', '@types')]
      },
      files: [join(dir, `${file}.ts`)]
    })
  )
  const stdout = await run(process.execPath, [tsc, '-p', config, '--extendedDiagnostics'], { cwd: root }).then(
    (result) => result.stdout,
    (error: { stdout: string }) => error.stdout
  )
  const figure = (label: string) => stdout.match(new RegExp(`^${label}:\\s+([\\d.]+)`, 'm'))?.[1]
  return {
    errors: stdout.split('\n').filter((line) => line.includes('error TS')),
    instantiations: Number(figure('Instantiations')),
    checkSeconds: Number(figure('Check time')),
    totalSeconds: Number(figure('Total time'))
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'plumage-fifty-services-'))
  await mkdir(join(dir, 'services'))
  await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  await Promise.all(indexes.map((i) => writeFile(join(dir, 'services', `s${i}.ts`), schemaModule(i))))
  await writeFile(join(dir, 'typed.ts'), clientModule(true))
  await writeFile(join(dir, 'untyped.ts'), clientModule(false))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

describe(`a typed client of ${SERVICES} generated services`, () => {
  it('type-checks with a bounded number of type instantiations (tsc --extendedDiagnostics)', async () => {
    const [typed, untyped] = [await diagnose('typed'), await diagnose('untyped')]
    expect(typed.errors).toEqual([])
    expect(untyped.errors).toEqual([])
    expect(typed.checkSeconds).toBeGreaterThan(0)
    const perService = (typed.instantiations - untyped.instantiations) / SERVICES
    if (process.env.TYPED_CLIENT_REPORT) console.log({ typed, untyped, perService })
    expect(perService).toBeGreaterThan(0)
    expect(perService).toBeLessThan(MAX_INSTANTIATIONS_PER_SERVICE)
  }, 300_000)
})
