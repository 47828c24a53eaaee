#!/usr/bin/env node
// `npm run example -- <name> [arguments]`: runs examples/<name>.ts on its own. esbuild bundles the
// example with the src/ files it imports (npm packages stay external) into node_modules/.cache, then
// the example's exported `main(...arguments)` runs. Without a name, lists the examples.
import { build } from 'esbuild'
import { readdirSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { root } from './build-options.mjs'

const [name, ...args] = process.argv.slice(2)
const examples = readdirSync(join(root, 'examples'))
  .filter((file) => file.endsWith('.ts'))
  .map((file) => file.slice(0, -3))
  .sort()

if (!name || !examples.includes(name)) {
  if (name) process.stderr.write(`no example named '${name}'\n`)
  process.stderr.write(`usage: npm run example -- <name> [arguments]\nexamples: ${examples.join(', ')}\n`)
  process.exit(1)
}

const outfile = join(root, 'node_modules', '.cache', 'plumage-examples', `${name}-${process.pid}.mjs`)
try {
  await build({
    entryPoints: [join(root, 'examples', `${name}.ts`)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'inline',
    logLevel: 'warning'
  })
  const example = await import(pathToFileURL(outfile).href)
  if (typeof example.main !== 'function') throw new Error(`examples/${name}.ts exports no main() to run`)
  await example.main(...args)
} catch (error) {
  process.stderr.write(`example ${name} failed: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = 1
} finally {
  await rm(outfile, { force: true })
}
