#!/usr/bin/env node
// Bundles the server (src/main.ts and everything it imports from src/, plus Inversify) into
// dist/plumage.mjs (or the file given as the first argument), the file `npm start` and the Docker image run. The other production
// dependencies stay external and load from node_modules. One file instead of ~90 of ours and
// ~240 small Inversify modules starts ~100 ms faster and a few MB smaller (BENCHMARKS.md).
import { build } from 'esbuild'
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const bundled = new Set(['inversify', 'reflect-metadata'])
const { dependencies } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

await build({
  entryPoints: [join(root, 'src', 'main.ts')],
  outfile: resolve(process.argv[2] ?? join(root, 'dist', 'plumage.mjs')),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: Object.keys(dependencies).filter((name) => !bundled.has(name)),
  // Linked, not inline: `node --enable-source-maps dist/plumage.mjs` maps stacks to src/ when wanted.
  sourcemap: 'linked',
  logLevel: 'warning'
})
