// The esbuild settings of the two bundles, shared by `npm run build` (build-server.mjs,
// build-client.mjs) and `npm run dev` (dev.mjs, which rebuilds them on every change).
import { existsSync, readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { basename, dirname, join, sep } from 'node:path'
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
    // The modules configuration selects (src/modules/index.ts) are `import()`ed: split into chunks beside the
    // entry, each read only when its module is loaded.
    outdir: dirname(outfile),
    entryNames: basename(outfile, '.mjs'),
    chunkNames: 'chunks/[name]-[hash]',
    outExtension: { '.js': '.mjs' },
    splitting: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minifyWhitespace: true,
    plugins: [externalFromSource(external), oneCopyPerPackage(join(root, 'package-lock.json')), jsonParsedAtRunTime()],
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

/**
 * Packages whose hoisted copy serves every importer, whatever version it nested: mime-db is data (the media types
 * of mime-types, ~140 kB of JSON), newer versions only add and correct entries. socket.io and engine.io pin 1.52
 * through accepts → mime-types and never look a type up (they ask accepts for encodings only).
 */
const hoisted = new Set(['mime-db'])

/**
 * Packages left to node_modules where bundled packages require them, when they resolve to the hoisted copy (the one
 * a `require` from dist/ finds, in a production install too). iconv-lite: body-parser and raw-body require it at
 * startup, and it loads its encodings itself on first use (the first request body), but bundled, its encodings and
 * their tables were ~0.5 MB of the bundle's 1.9 MB, parsed at every start.
 */
const unbundled = new Set(['iconv-lite'])

/**
 * One copy of each package version in the bundle. npm nests a package under its dependent when the hoisted copy is
 * another version, so the same files can be installed many times: debug 4.4.3 under nine of the bundled packages,
 * accepts, mime-types, mime-db and negotiator under both socket.io and engine.io. Bundled as they are, each copy is
 * parsed and run at every start (mime-types builds its maps of ~2,500 types once per copy). A package found in a
 * nested folder is taken from the first folder package-lock.json lists for the same name and version (the
 * shallowest, then by name), and the packages of `hoisted` from node_modules/<name>.
 */
function oneCopyPerPackage(lockFile) {
  // name@version → the folder it is taken from: a production dependency's before a devDependency's, the shallowest,
  // then the first by name
  const first = new Map()
  const production = new Set()
  const rank = ([folder, entry]) => `${entry.dev ? 1 : 0}${String(folder.split('/').length).padStart(3, '0')}${folder}`
  const installed = Object.entries(JSON.parse(readFileSync(lockFile, 'utf8')).packages)
  for (const [folder, { version }] of installed.sort((a, b) => (rank(a) < rank(b) ? -1 : 1))) {
    const key = `${folder.split('node_modules/').at(-1)}@${version}`
    if (folder.includes('node_modules/') && !first.has(key)) first.set(key, folder)
  }
  for (const [folder, entry] of installed) if (!entry.dev) production.add(folder)
  return {
    name: 'one-copy-per-package',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, async ({ path, importer, resolveDir, kind, pluginData }) => {
        if (pluginData?.oneCopy || !importer.includes(`${sep}node_modules${sep}`)) return undefined
        const resolved = await build.resolve(path, { importer, resolveDir, kind, pluginData: { oneCopy: true } })
        const found = resolved.errors.length === 0 && !resolved.external && installedFile(resolved.path)
        // esbuild's own resolution reports what was not found (a warning inside try/catch, as ws's optional addons)
        if (!found) return resolved.errors.length > 0 ? undefined : resolved
        const { version } = JSON.parse(readFileSync(join(found.root, found.folder, 'package.json'), 'utf8'))
        const canonical = hoisted.has(found.name)
          ? `node_modules/${found.name}`
          : (first.get(`${found.name}@${version}`) ?? found.folder)
        if (unbundled.has(found.name) && canonical === `node_modules/${found.name}` && production.has(canonical))
          return { path, external: true }
        const path_ = join(found.root, canonical, found.inside)
        return canonical === found.folder || !existsSync(path_) ? resolved : { ...resolved, path: path_ }
      })
    }
  }
}

/**
 * Packages' JSON files (mime-db's types, http's status codes, iconv-lite's tables…) as `JSON.parse` of a string:
 * bundled as object literals, they were parsed as JavaScript at every start, whether they are used or not; V8
 * scans a string literal faster than it parses the same data as code, and JSON.parse builds it faster too.
 */
function jsonParsedAtRunTime() {
  return {
    name: 'json-parsed-at-run-time',
    setup(build) {
      build.onLoad({ filter: /\.json$/ }, async ({ path }) => ({
        contents: `module.exports = JSON.parse(${JSON.stringify(JSON.stringify(JSON.parse(await readFile(path, 'utf8'))))})`,
        loader: 'js'
      }))
    }
  }
}

/**
 * Where a file of an installed package lies: /app/node_modules/a/node_modules/@b/c/lib/d.js is in the folder
 * node_modules/a/node_modules/@b/c (package-lock.json's key) of the install root /app, package @b/c, file lib/d.js.
 */
function installedFile(path) {
  const at = path.indexOf(`${sep}node_modules${sep}`)
  if (at < 0) return undefined
  const parts = path.slice(at + 1).split(sep)
  const start = parts.lastIndexOf('node_modules') + 1
  const end = start + (parts[start].startsWith('@') ? 2 : 1)
  return {
    root: path.slice(0, at + 1),
    folder: parts.slice(0, end).join('/'),
    name: parts.slice(start, end).join('/'),
    inside: parts.slice(end).join(sep)
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
