// The esbuild settings of the two bundles, shared by `npm run build` (build-server.mjs,
// build-client.mjs) and `npm run dev` (dev.mjs, which rebuilds them on every change).
import { readFileSync } from 'node:fs'
import { dirname, join, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/**
 * The packages bundled into the server with everything they require: what `npm start` loads before it
 * answers. Loaded from node_modules, they were ~350 CommonJS files, each resolved (stat, realpath,
 * package.json), read and compiled on its own; bundled, a start takes ~30 % less CPU (BENCHMARKS.md).
 */
const startupPackages = new Set([
  'express',
  'inversify',
  'prom-client',
  'qs',
  'reflect-metadata',
  'socket.io',
  'socket.io-adapter'
])

/**
 * The server: src/main.ts and everything it imports from src/, plus the startup packages above, in one
 * ESM file. The other production dependencies stay external and load from node_modules: those loaded
 * on first use (bcrypt's native binding, the database drivers, fastify, the OpenTelemetry SDK…: src
 * requires or `import()`s them lazily), and pino, whose transports run files of its own in worker threads.
 * Whitespace and comments are left out: the file is ~30 % smaller and pure ASCII, and V8 keeps a module's
 * source in memory for as long as it runs (a non-ASCII character in any comment made it two bytes a character,
 * ~4 MB of idle RSS). Stacks name the functions still; `node --enable-source-maps` maps them to src/.
 */
export function serverOptions(outfile = join(root, 'dist', 'plumage.mjs')) {
  const { dependencies } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  const external = new Set(Object.keys(dependencies).filter((name) => !startupPackages.has(name)))
  return {
    entryPoints: [join(root, 'src', 'main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minifyWhitespace: true,
    plugins: [externalFromSource(external)],
    // The bundled CommonJS packages require Node's built-ins (and ws its optional addons) at run time.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"
    },
    // Linked, not inline: `node --enable-source-maps dist/plumage.mjs` maps stacks to src/ when wanted.
    sourcemap: 'linked',
    logLevel: 'warning'
  }
}

/**
 * Leaves `packages` to node_modules where src/ imports them. A bundled package that requires one of
 * them (engine.io requires cors, prom-client @opentelemetry/api) gets the version it resolves to itself,
 * bundled with it: a bare name left in the bundle would resolve from dist/, maybe to another version.
 */
function externalFromSource(packages) {
  return {
    name: 'external-from-source',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, ({ path, importer }) => {
        if (importer.includes(`${sep}node_modules${sep}`)) return undefined
        const name = path.split('/', path.startsWith('@') ? 2 : 1).join('/')
        return packages.has(name) ? { path, external: true } : undefined
      })
    }
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
