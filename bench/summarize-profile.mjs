#!/usr/bin/env node
// Summarizes `node --cpu-prof` profiles: the functions with the most self time, and self time per
// package (node_modules/<name>), plumage's own code (src/, dist/plumage.mjs) and Node's internals.
// Usage: node bench/summarize-profile.mjs [--top N] [--after MS] <file.cpuprofile>...   (several files are added up;
// --after leaves out the first MS milliseconds of each profile, e.g. a server's startup before the load)
import { readFileSync } from 'node:fs'

const args = process.argv.slice(2)
let top = 25
let after = 0
const files = []
for (let index = 0; index < args.length; index++) {
  if (args[index] === '--top') top = Number(args[++index])
  else if (args[index] === '--after') after = Number(args[++index])
  else files.push(args[index])
}
if (files.length === 0) {
  console.error('usage: node bench/summarize-profile.mjs [--top N] [--after MS] <file.cpuprofile>...')
  process.exit(2)
}

const byFunction = new Map()
const byOrigin = new Map()
let total = 0
const add = (map, key, ms) => map.set(key, (map.get(key) ?? 0) + ms)

/** Where a frame's code comes from: a package, plumage, Node itself, or V8/GC pseudo-frames. */
function origin(url, name) {
  if (!url) return name.startsWith('(') ? name : '(native)'
  const packages = url.split('node_modules/')
  if (packages.length > 1) {
    const rest = packages.at(-1).split('/')
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]
  }
  if (url.startsWith('node:')) return 'node internals'
  if (/\/(src|dist\/plumage\.mjs|dist\/bench)/.test(url)) return 'plumage'
  return url
}

for (const file of files) {
  const { nodes, samples, timeDeltas } = JSON.parse(readFileSync(file, 'utf8'))
  const nodeById = new Map(nodes.map((node) => [node.id, node]))
  const self = new Map()
  // Each sample's time is the delta to the next one, charged to the frame on top of the stack.
  let elapsed = 0
  for (let index = 0; index < samples.length; index++) {
    elapsed += timeDeltas[index] / 1000
    if (elapsed < after) continue
    const ms = (timeDeltas[index + 1] ?? 0) / 1000
    add(self, samples[index], ms)
  }
  for (const [id, ms] of self) {
    const { callFrame } = nodeById.get(id)
    const name = callFrame.functionName || '(anonymous)'
    const where = callFrame.url
      ? `${callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(src|dist)\//, '$1/')}:${callFrame.lineNumber + 1}`
      : ''
    add(byFunction, `${name} ${where}`.trim(), ms)
    add(byOrigin, origin(callFrame.url, name), ms)
    if (name !== '(idle)' && name !== '(program)') total += ms
  }
}

const rows = (map, count) =>
  [...map]
    .filter(([key]) => !key.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([key, ms]) => `| ${key} | ${ms.toFixed(1)} | ${((100 * ms) / total).toFixed(1)} % |`)
    .join('\n')

console.log(`${files.length} profile(s), ${total.toFixed(0)} ms of samples (idle and "(program)" left out of the %)\n`)
console.log(`| top self time | ms | share |\n|---|--:|--:|\n${rows(byFunction, top)}\n`)
console.log(`| self time by origin | ms | share |\n|---|--:|--:|\n${rows(byOrigin, 15)}`)
