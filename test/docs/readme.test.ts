import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { execFile } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { promisify } from 'node:util'
import { startAuthServer, type AuthServer } from '../support/auth-server.js'
import { gravatar } from '../support/gravatar.js'

/*
 * The docs cannot rot: every fenced block in README.md and docs/*.md carries a marker comment on the
 * line before it saying how it is checked, and this suite checks it.
 *   <!-- file: path -->     the block is that file, verbatim (the file is type-checked and run by a test)
 *   <!-- excerpt: path -->  the block appears verbatim in that file
 *   <!-- run: curl -->      the block runs with bash + curl against a real server
 *   <!-- command -->        shell commands: npm scripts, files and variables they name must exist
 *   <!-- diagram -->        every src/ folder the diagram names exists
 */
interface Block {
  doc: string
  line: number
  marker: string
  lang: string
  code: string
}

const docs = [
  'README.md',
  ...readdirSync('docs', { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`)
]

function blocksOf(doc: string): Block[] {
  const lines = readFileSync(doc, 'utf8').split('\n')
  const blocks: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!)
    if (!open) continue
    const end = lines.indexOf('```', i + 1)
    if (end < 0) throw new Error(`${doc}:${i + 1}: unterminated code block`)
    const marker = /^<!-- (.+) -->$/.exec(lines[i - 1] ?? '')?.[1] ?? ''
    blocks.push({ doc, line: i + 1, marker, lang: open[1]!, code: lines.slice(i + 1, end).join('\n') })
    i = end
  }
  return blocks
}

const blocks = docs.flatMap(blocksOf)
const where = (block: Block) => `${block.doc}:${block.line}`
const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts
/** Where variables are read: the core config, and each adapter's own settings (`*-settings.ts` beside its module). */
const settingsFiles = [
  'src/infrastructure/config/config.ts',
  ...readdirSync('src/infrastructure', { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('-settings.ts'))
    .map((name) => `src/infrastructure/${name}`)
]
const configSource = settingsFiles.map((file) => readFileSync(file, 'utf8')).join('\n')
const configVariables = [
  ...new Set([...configSource.matchAll(/env(?:\.|, ')([A-Z][A-Z_]+)/g)].map((match) => match[1]!))
]
const readme = readFileSync('README.md', 'utf8')
/** Variables the test helpers read (e.g. RETHINKDB_BIN): commands that run the tests may name them. */
const testVariables = readdirSync('test/support')
  .filter((name) => name.endsWith('.ts'))
  .flatMap((name) =>
    [...readFileSync(`test/support/${name}`, 'utf8').matchAll(/process\.env\.([A-Z][A-Z_]+)/g)].map(
      (match) => match[1]!
    )
  )

describe('code blocks in the docs', () => {
  it('finds the blocks, each with a known marker', () => {
    expect(blocks.length).toBeGreaterThan(10)
    for (const block of blocks)
      expect(`${where(block)} ${block.marker}`).toMatch(/ (file|excerpt): \S+$| run: curl$| command$| diagram$/)
  })

  it.each(blocks.filter((block) => block.marker.startsWith('file: ')).map((block) => [where(block), block] as const))(
    '%s is the file it names',
    (_where, block) => {
      const path = block.marker.slice('file: '.length)
      expect(block.code).toBe(readFileSync(path, 'utf8').trimEnd())
    }
  )

  it.each(
    blocks.filter((block) => block.marker.startsWith('excerpt: ')).map((block) => [where(block), block] as const)
  )('%s is quoted from the file it names', (_where, block) => {
    expect(readFileSync(block.marker.slice('excerpt: '.length), 'utf8')).toContain(block.code)
  })

  it.each(blocks.filter((block) => block.marker === 'command').map((block) => [where(block), block] as const))(
    '%s names real scripts, files and variables',
    (_where, block) => {
      for (const [, script] of block.code.matchAll(/npm run ([\w:-]+)/g)) expect(Object.keys(scripts)).toContain(script)
      for (const [, script] of block.code.matchAll(/npm (start|test)\b/g))
        expect(Object.keys(scripts)).toContain(script)
      for (const [, name] of block.code.matchAll(/(?:^|\s|-e )([A-Z][A-Z_]+)=/gm))
        expect([...configVariables, ...testVariables]).toContain(name)
      if (block.code.includes('docker compose')) expect(existsSync('docker-compose.yml')).toBe(true)
      if (block.code.includes('docker build')) expect(existsSync('Dockerfile')).toBe(true)
    }
  )

  it.each(blocks.filter((block) => block.marker === 'diagram').map((block) => [where(block), block] as const))(
    '%s names folders that exist',
    (_where, block) => {
      const folders = [...block.code.matchAll(/src\/[\w./-]+/g)].map((match) => match[0])
      expect(folders.length).toBeGreaterThan(3)
      for (const folder of folders) expect(`${folder}: ${existsSync(folder)}`).toBe(`${folder}: true`)
    }
  )
})

describe('tables in the README', () => {
  it("documents every variable the config and the adapters' settings read, and no other", () => {
    expect(settingsFiles).toContain('src/infrastructure/rethinkdb/rethinkdb-settings.ts')
    const section = readme.slice(
      readme.indexOf('## Configuration'),
      readme.indexOf('\n## ', readme.indexOf('## Configuration') + 5)
    )
    const documented = [...section.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((match) => match[1])
    expect(configVariables.length).toBeGreaterThan(10)
    expect(documented.sort()).toEqual([...configVariables].sort())
  })
})

describe('examples against a real server', () => {
  let server: AuthServer
  let token: string
  beforeAll(async () => {
    server = await startAuthServer()
  })
  afterAll(() => server?.close())

  it('runs the curl session of "REST mapping" with every request succeeding', async () => {
    const [session] = blocks.filter((block) => block.marker === 'run: curl')
    expect(session?.code.split('\n')[0]).toBe('B=http://127.0.0.1:3030')
    // Every curl fails the script on an HTTP error (set -e); the session itself stays as written.
    const prelude = 'set -euo pipefail\ncurl() { command curl -sS --fail-with-body "$@"; echo; }\n'
    const script = prelude + session!.code.replace('B=http://127.0.0.1:3030', `B=${server.url}`)
    const { stdout } = await promisify(execFile)('bash', ['-c', script])
    const lines = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(lines[0]).toEqual({ email: 'ann@example.com', id: 0, avatar: gravatar('ann@example.com') })
    expect(lines[1]).toMatchObject({ text: 'Hello', id: 0, user: { id: 0, email: 'ann@example.com' } })
    expect(lines[2]).toMatchObject({ text: 'From a form', tags: ['a', 'b'] })
    expect(lines[3]).toMatchObject({ total: 2, limit: 2, data: [{ id: 1 }, { id: 0 }] })
    expect(lines[4]).toMatchObject({ total: 1, data: [{ id: 0, text: 'Hello' }] })
    expect(lines.at(-3)).toMatchObject({ id: 0, text: 'Replaced' })
    expect(lines.at(-2)).toMatchObject({ id: 0, text: 'Replaced', status: 'archived' })
    expect(lines.at(-1)).toEqual([expect.objectContaining({ id: 0, status: 'archived' })])
  })

  it('answers every URL form of the "Query syntax" table', async () => {
    const auth = await fetch(`${server.url}/authentication`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ strategy: 'local', email: 'ann@example.com', password: 'secret-pw' })
    })
    token = ((await auth.json()) as { accessToken: string }).accessToken
    const section = readme.slice(readme.indexOf('## Query syntax'), readme.indexOf('## Authentication'))
    const rows = section.split('\n').filter((line) => line.startsWith('| ') && line.includes('`?'))
    expect(rows.length).toBeGreaterThanOrEqual(10)
    for (const row of rows) {
      for (const [, form] of row.matchAll(/`(\?[^`]+)`/g)) {
        const response = await fetch(`${server.url}/messages${form}`, { headers: { Authorization: `Bearer ${token}` } })
        const body = (await response.json()) as { total?: number }
        expect([form, response.status, typeof body.total]).toEqual([form, 200, 'number'])
      }
    }
  })
})
