import { describe, expect, it } from '@jest/globals'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'

/*
 * README's architecture diagram draws true arrows: every arrow `a --> b` (labelled or dotted) is an
 * import in the code, from a file of what `a` names to a file of what `b` names. Each box is mapped
 * to its source here; a box added to the diagram without a mapping fails the test. And it draws every
 * folder: each folder of an adapter, a module or a use case (the folders of src/application,
 * src/infrastructure and src/interfaces) and each top-level folder of src/ but the domain's is a box's
 * source, or holds one; a new folder that no box draws fails the test.
 */

/** The source of each box: a folder (every file under it) or a file. `ports` are the files the barrel re-exports. */
const SOURCES: Readonly<Record<string, string | readonly string[]>> = {
  http: 'src/interfaces/http',
  rest: 'src/interfaces/rest',
  fastify: 'src/interfaces/fastify',
  sio: 'src/interfaces/socketio',
  realtime: 'src/interfaces/realtime',
  extensions: ['src/interfaces/api-docs', 'src/interfaces/http-metrics', 'src/interfaces/tracing'],
  client: 'src/interfaces/client',
  web: 'src/interfaces/web',
  livesocket: 'src/interfaces/live',
  gateway: 'src/application/transport',
  app: ['src/application/app.ts', 'src/application/app-core.ts'],
  modules: 'src/modules',
  adapter: 'src/application/adapter-service.ts',
  auth: 'src/application/authentication',
  schema: 'src/application/schema',
  sessions: ['src/application/sessions', 'src/application/recovery'],
  access: ['src/application/resolvers', 'src/application/rules'],
  live: 'src/application/live',
  idempotency: 'src/application/idempotency',
  ports: [...readFileSync('src/domain/ports.ts', 'utf8').matchAll(/from '\.\/([^']+)\.js'/g)].map(
    (match) => `src/domain/${match[1]}.ts`
  ),
  query: 'src/domain/query',
  errors: 'src/domain/errors',
  memory: 'src/infrastructure/memory',
  postgres: 'src/infrastructure/postgres',
  rethink: 'src/infrastructure/rethinkdb',
  commons: 'src/infrastructure/store-commons',
  bcrypt: 'src/infrastructure/auth/bcrypt-password-hasher.ts',
  jwt: 'src/infrastructure/auth/json-web-token-service.ts',
  ajv: 'src/infrastructure/schema',
  clock: 'src/infrastructure/clock',
  pino: ['src/infrastructure/logging', 'src/infrastructure/config', 'src/infrastructure/live'],
  observe: ['src/infrastructure/metrics', 'src/infrastructure/tracing'],
  container: 'src/container.ts',
  library: 'src/library',
  services: 'src/services',
  kit: 'src/testing',
  infrastructure: 'src/infrastructure',
  application: 'src/application'
}

const readme = readFileSync('README.md', 'utf8')
const diagram = /<!-- diagram -->\n```mermaid\n([\s\S]*?)\n```/.exec(readme)?.[1] ?? ''

/** Every `.ts` file of a box. */
function filesOf(box: string): string[] {
  const sources = SOURCES[box]
  if (sources === undefined) throw new Error(`README diagram: no source mapped for the box '${box}'`)
  return [sources].flat().flatMap((source) =>
    statSync(source).isDirectory()
      ? readdirSync(source, { recursive: true, encoding: 'utf8' })
          .filter((name) => name.endsWith('.ts'))
          .map((name) => join(source, name))
      : [source]
  )
}

/** The project files a file imports (relative specifiers, `.js` written for `.ts`). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  return [...text.matchAll(/(?:from|import)\s*'(\.{1,2}\/[^']+)'/g)].map((match) =>
    normalize(join(dirname(file), match[1]!.replace(/\.js$/, '.ts')))
  )
}

/** `[from, to]` of every arrow: `a --> b`, `a -- label --> b`, `a -. label .-> b`, boxes declared inline. */
function arrows(): [string, string][] {
  return [...diagram.matchAll(/^\s*(\w+)(?:\[[^\]]*\])?\s*(?:-->|--\s[^\n]*?-->|-\.\s[^\n]*?\.->)\s*(\w+)\s*$/gm)].map(
    (match) => [match[1]!, match[2]!]
  )
}

/** The boxes the diagram declares (`id[label]`) or draws an arrow from or to; subgraphs are not boxes. */
function boxes(): Set<string> {
  const declared = [...diagram.matchAll(/^\s*(\w+)\[/gm)].map((match) => match[1]!)
  const subgraphs = [...diagram.matchAll(/^\s*subgraph (\w+)/gm)].map((match) => match[1]!)
  return new Set([...declared, ...arrows().flat()].filter((box) => !subgraphs.includes(box)))
}

/** The folders the diagram must draw: every folder of an adapter, module or use case, and src/'s own but domain. */
function foldersToDraw(): string[] {
  const under = (folder: string) =>
    readdirSync(folder, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${folder}/${entry.name}`)
  const layers = ['src/application', 'src/infrastructure', 'src/interfaces']
  return [
    ...under('src').filter((folder) => !layers.includes(folder) && folder !== 'src/domain'),
    ...layers.flatMap(under)
  ]
}

describe('README architecture diagram', () => {
  it('has arrows to check', () => {
    expect(arrows().length).toBeGreaterThan(10)
  })

  it('draws every folder of an adapter, a module or a use case', () => {
    const drawn = [...boxes()].flatMap((box) => [SOURCES[box] ?? []].flat())
    const undrawn = foldersToDraw().filter(
      (folder) => !drawn.some((source) => source === folder || source.startsWith(`${folder}/`))
    )
    expect(foldersToDraw().length).toBeGreaterThan(20)
    expect(undrawn).toEqual([])
  })

  it.each(arrows())('%s → %s is an import in the code', (from, to) => {
    const targets = new Set(filesOf(to))
    const importing = filesOf(from).filter((file) => importsOf(file).some((target) => targets.has(target)))
    expect(importing).not.toEqual([])
  })
})
