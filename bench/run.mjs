#!/usr/bin/env node
// Runs a TypeScript benchmark: bundles bench/<name>.ts with esbuild (packages stay external) and imports it.
// The servers in bench/support/*-server.ts are bundled beside it, since benchmarks spawn them as processes.
// Several benchmarks run the server `npm start` runs (dist/plumage.mjs), so the build is brought up to date first
// (scripts/build-if-changed.mjs: nothing to do when no input changed), never measured against a stale one.
import { build } from 'esbuild'
import { spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const name = process.argv[2]
if (!name) {
  console.error('usage: node bench/run.mjs <benchmark>   (a file bench/<benchmark>.ts)')
  process.exit(2)
}
const serverBuild = spawnSync(process.execPath, [join(here, '..', 'scripts', 'build-if-changed.mjs')], {
  cwd: join(here, '..'),
  stdio: 'inherit'
})
if (serverBuild.status !== 0) process.exit(serverBuild.status ?? 1)
const outdir = join(here, '..', 'dist', 'bench')
mkdirSync(outdir, { recursive: true })
const servers = readdirSync(join(here, 'support'))
  .filter((file) => file.endsWith('-server.ts'))
  .map((file) => join(here, 'support', file))
const options = {
  outdir,
  outbase: here,
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning'
}
// No source maps in the servers: cold start would pay for parsing them and the server bundle dist/plumage.mjs does not
// load its map either.
await Promise.all([
  build({ ...options, entryPoints: [join(here, `${name}.ts`)], sourcemap: 'inline' }),
  build({ ...options, entryPoints: servers })
])
await import(pathToFileURL(join(outdir, `${name}.mjs`)).href)
