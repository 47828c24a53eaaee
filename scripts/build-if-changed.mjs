#!/usr/bin/env node
// `npm start` builds only when something the build reads changed since the last build. The inputs'
// paths, sizes and modification times are hashed into dist/.build-stamp after each build; the build
// runs again when that fingerprint differs (a file edited, touched, added or deleted) or an output is
// missing. `npm run build` always builds. Run on its own: node scripts/build-if-changed.mjs
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { root } from './build-options.mjs'

/** What the build produces: never counted as inputs (public/app.js lives among the inputs). */
export const outputs = ['dist/plumage.mjs', 'public/app.js']
const stampFile = 'dist/.build-stamp'

/** What the build reads: src/, public/, scripts/, package.json, package-lock.json and the tsconfig files. */
function inputs(base) {
  const top = readdirSync(base).filter(
    (name) => /^tsconfig.*\.json$/.test(name) || name === 'package.json' || name === 'package-lock.json'
  )
  return [...top, 'src', 'public', 'scripts']
}

/**
 * The input files under `path` (a file or a folder), relative to `base`, in a stable order. Folder
 * entries say their type, so only symbolic links are stat-ed here; each file once, in fingerprint().
 */
function files(base, path, found = []) {
  let entries
  try {
    entries = readdirSync(join(base, path), { withFileTypes: true })
  } catch (error) {
    if (error.code === 'ENOTDIR' && !outputs.includes(path)) found.push(path)
    else if (error.code !== 'ENOENT' && error.code !== 'ENOTDIR') throw error
    return found
  }
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const inner = join(path, entry.name)
    // A link counts as what it points to; a dangling one as nothing.
    const target = entry.isSymbolicLink() ? statSync(join(base, inner), { throwIfNoEntry: false }) : entry
    if (!target) continue
    if (target.isDirectory()) files(base, inner, found)
    else if (!outputs.includes(inner)) found.push(inner)
  }
  return found
}

/** The hash of every input's path, size and modification time. */
export function fingerprint(base = root) {
  const hash = createHash('sha256')
  for (const input of inputs(base).sort()) {
    for (const path of files(base, input)) {
      const { size, mtimeMs } = statSync(join(base, path))
      hash.update(`${path}\t${size}\t${mtimeMs}\n`)
    }
  }
  return hash.digest('hex')
}

/** Whether the outputs exist and were built from the inputs as they are now. */
export function upToDate(base = root, current = fingerprint(base)) {
  if (!outputs.every((output) => existsSync(join(base, output)))) return false
  const stamp = join(base, stampFile)
  return existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === current
}

/**
 * Runs `npm run build` unless the build is up to date; returns whether it built. The fingerprint is
 * taken before building, so a file saved during the build makes the next start build again.
 */
export function buildIfChanged(base = root, log = (line) => process.stderr.write(`${line}\n`)) {
  const current = fingerprint(base)
  if (upToDate(base, current)) {
    log(`build up to date (${outputs.join(', ')}): skipped; npm run build rebuilds anyway`)
    return false
  }
  // Under `npm start`, that npm's own CLI; run directly (or under npx), the npm on PATH.
  const npm = process.env.npm_execpath
  const result =
    npm && /npm-cli\.[cm]?js$/.test(npm)
      ? spawnSync(process.execPath, [npm, 'run', 'build'], { cwd: base, stdio: 'inherit' })
      : spawnSync('npm', ['run', 'build'], { cwd: base, stdio: 'inherit', shell: process.platform === 'win32' })
  if (result.status !== 0) {
    const error = new Error(`npm run build failed (exit code ${result.status ?? result.signal}); see above`)
    error.exitCode = result.status || 1
    throw error
  }
  mkdirSync(join(base, 'dist'), { recursive: true })
  writeFileSync(join(base, stampFile), `${current}\n`)
  log(`built ${outputs.join(', ')}`)
  return true
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    buildIfChanged()
  } catch (error) {
    process.stderr.write(`${error.message}\n`)
    process.exit(error.exitCode ?? 1)
  }
}
