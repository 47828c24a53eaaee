#!/usr/bin/env node
// Bundles the chat page's script (src/interfaces/web/chat.ts, with plumage's browser client and
// socket.io-client) into public/app.js, or into the directory given as the first argument.
import { build } from 'esbuild'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const outDir = resolve(process.argv[2] ?? join(root, 'public'))

await build({
  entryPoints: [join(root, 'src', 'interfaces', 'web', 'chat.ts')],
  outfile: join(outDir, 'app.js'),
  bundle: true,
  minify: true,
  format: 'iife',
  platform: 'browser',
  target: ['es2020'],
  logLevel: 'warning'
})
