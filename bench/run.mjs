#!/usr/bin/env node
// Runs a TypeScript benchmark: bundles bench/<name>.ts with esbuild (packages stay external) and imports it.
import { build } from 'esbuild'
import { mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const name = process.argv[2]
if (!name) {
  console.error('usage: node bench/run.mjs <benchmark>   (a file bench/<benchmark>.ts)')
  process.exit(2)
}
const outDir = join(here, '..', 'dist', 'bench')
mkdirSync(outDir, { recursive: true })
const outfile = join(outDir, `${name}.mjs`)
await build({
  entryPoints: [join(here, `${name}.ts`)],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: 'inline',
  logLevel: 'warning'
})
await import(pathToFileURL(outfile).href)
