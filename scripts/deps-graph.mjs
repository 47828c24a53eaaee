#!/usr/bin/env node
// `npm run deps:graph [-- <folder>]`: draws what src/ imports, as dependency-cruiser sees it with the
// project's rules (.dependency-cruiser.cjs), into dist/deps-graph (or <folder>): layers.* has one box
// per layer (domain, application, infrastructure, interfaces, services) and per root file, modules.*
// one per folder or file inside a layer (application/transport, infrastructure/rethinkdb…). Each is
// written as Mermaid (.mmd: GitHub and most editors render it) and Graphviz (.dot); when Graphviz's
// `dot` is installed, also as .svg. The drawing is generated, never committed: it cannot go stale.
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { format } from 'dependency-cruiser'
import { root } from './build-options.mjs'

const out = resolve(process.argv[2] ?? join(root, 'dist', 'deps-graph'))
/** Everything matching the pattern is drawn as one box (dependency-cruiser's `--collapse`). */
const graphs = { layers: '^src/[^/]+', modules: '^src/[^/]+/[^/]+' }
const formats = { mmd: 'mermaid', dot: 'dot' }
const cruiser = join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs')

mkdirSync(out, { recursive: true })
// One cruise, through the CLI as `npm run lint` runs it (same config), then one drawing per graph and format.
const cruised = join(out, 'cruise.json')
execFileSync(
  process.execPath,
  [cruiser, 'src', '--config', '.dependency-cruiser.cjs', '--include-only', '^src/', '--output-type', 'json'].concat([
    '--output-to',
    cruised
  ]),
  { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] }
)
const result = JSON.parse(readFileSync(cruised, 'utf8'))
rmSync(cruised)
const written = []
for (const [name, collapse] of Object.entries(graphs)) {
  for (const [extension, outputType] of Object.entries(formats)) {
    const file = join(out, `${name}.${extension}`)
    writeFileSync(file, (await format(result, { outputType, collapse })).output)
    written.push(file)
  }
}

const graphviz = spawnSync('dot', ['-V'], { stdio: 'ignore' }).error === undefined
if (graphviz) {
  for (const name of Object.keys(graphs)) {
    const file = join(out, `${name}.svg`)
    execFileSync('dot', ['-Tsvg', join(out, `${name}.dot`), '-o', file])
    written.push(file)
  }
}
process.stdout.write(`${written.map((file) => relative(process.cwd(), file)).join('\n')}\n`)
if (!graphviz) {
  process.stdout.write(
    'Graphviz is not installed, so no .svg: paste a .mmd file into a Mermaid renderer, or install graphviz and run ' +
      '`dot -Tsvg <file>.dot -o <file>.svg`.\n'
  )
}
