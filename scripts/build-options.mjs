// The esbuild settings of the two bundles, shared by `npm run build` (build-server.mjs,
// build-client.mjs) and `npm run dev` (dev.mjs, which rebuilds them on every change).
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/**
 * The server: src/main.ts and everything it imports from src/, plus Inversify, in one ESM file. The
 * other production dependencies stay external and load from node_modules. One file instead of ~90
 * of ours and ~240 small Inversify modules starts ~100 ms faster and a few MB smaller (BENCHMARKS.md).
 */
export function serverOptions(outfile = join(root, 'dist', 'plumage.mjs')) {
  const bundled = new Set(['inversify', 'reflect-metadata'])
  const { dependencies } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  return {
    entryPoints: [join(root, 'src', 'main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: Object.keys(dependencies).filter((name) => !bundled.has(name)),
    // Linked, not inline: `node --enable-source-maps dist/plumage.mjs` maps stacks to src/ when wanted.
    sourcemap: 'linked',
    logLevel: 'warning'
  }
}

/** The chat page's script: src/interfaces/web/chat.ts with plumage's browser client and socket.io-client. */
export function clientOptions(outDir = join(root, 'public')) {
  return {
    entryPoints: [join(root, 'src', 'interfaces', 'web', 'chat.ts')],
    outfile: join(outDir, 'app.js'),
    bundle: true,
    minify: true,
    format: 'iife',
    platform: 'browser',
    target: ['es2020'],
    logLevel: 'warning'
  }
}
