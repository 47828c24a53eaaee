import { afterAll, describe, expect, it } from '@jest/globals'
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'

/*
 * `npm run deps:graph` draws the layers from dependency-cruiser. Run here without Graphviz on the PATH
 * (CI has none): the Mermaid and dot files are written, the SVGs skipped with a line saying how to render.
 */
const run = promisify(execFile)
mkdirSync('test-artifacts', { recursive: true })
const out = mkdtempSync(join('test-artifacts', 'deps-graph-'))
afterAll(() => rmSync(out, { recursive: true, force: true }))

/** The edges of a dependency-cruiser Mermaid drawing, by box label: `application -> domain`. */
function edgesOf(mermaid: string): string[] {
  const labels = new Map([...mermaid.matchAll(/^(\w+)\["([^"]+)"\]$/gm)].map((match) => [match[1]!, match[2]!]))
  return [...mermaid.matchAll(/^(\w+)-->(\w+)$/gm)].map(
    (match) => `${labels.get(match[1]!)} -> ${labels.get(match[2]!)}`
  )
}

describe('npm run deps:graph', () => {
  it('draws the layers as dependency-cruiser sees them, without needing Graphviz', async () => {
    const { stdout } = await run(process.execPath, ['scripts/deps-graph.mjs', out], {
      // Node is called by its full path: a PATH of one empty folder finds no `dot`.
      env: { ...process.env, PATH: mkdtempSync(join(out, 'path-')) }
    })
    expect(stdout).toContain('Graphviz is not installed')
    for (const file of ['layers.mmd', 'layers.dot', 'modules.mmd', 'modules.dot'])
      expect(existsSync(join(out, file))).toBe(true)
    expect(existsSync(join(out, 'layers.svg'))).toBe(false)

    const layers = edgesOf(readFileSync(join(out, 'layers.mmd'), 'utf8'))
    expect(layers).toEqual(
      expect.arrayContaining(['application -> domain', 'interfaces -> application', 'container.ts -> infrastructure'])
    )
    expect(layers.filter((edge) => edge.startsWith('domain ->'))).toEqual([])
    expect(layers).not.toContain('interfaces -> infrastructure')
    expect(readFileSync(join(out, 'modules.dot'), 'utf8')).toContain('"src/application/transport"')
  })
})
