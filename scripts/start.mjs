#!/usr/bin/env node
// `npm start`: reads .env when present, builds when an input changed since the last build
// (build-if-changed.mjs; an unchanged checkout starts at once), then runs dist/plumage.mjs in this
// process.
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { buildIfChanged } from './build-if-changed.mjs'
import { root } from './build-options.mjs'
import { loadEnvFile } from './env-file.mjs'

loadEnvFile()
try {
  buildIfChanged()
} catch (error) {
  process.stderr.write(`${error.message}\n`)
  process.exit(error.exitCode ?? 1)
}
await import(pathToFileURL(join(root, 'dist', 'plumage.mjs')).href)
