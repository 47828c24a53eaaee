import { execFile } from 'node:child_process'
import { cp, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { promisify } from 'node:util'

/*
 * A throw-away copy of what the build reads (src, public, scripts, package files, tsconfig files)
 * with the checkout's node_modules linked in, so the scripts of package.json run there as they do
 * in a fresh clone, without touching this checkout's dist/ or public/app.js.
 */
const root = process.cwd()
const exec = promisify(execFile)

export interface CheckoutCopy {
  dir: string
  remove(): Promise<void>
}

/**
 * `build` replaces the copy's `npm run build` (e.g. the bundling steps without the type check, plus a
 * line in builds.log per run); undefined keeps the real one.
 */
export async function copyCheckout(build?: string): Promise<CheckoutCopy> {
  const dir = await mkdtemp(join(tmpdir(), 'plumage-checkout-'))
  const top = (await readdir(root)).filter((name) => /^(tsconfig.*\.json|package\.json|package-lock\.json)$/.test(name))
  for (const name of [...top, 'src', 'public', 'scripts']) {
    await cp(join(root, name), join(dir, name), {
      recursive: true,
      filter: (path) => !path.endsWith(join('public', 'app.js'))
    })
  }
  await symlink(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir')
  if (build !== undefined) {
    const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    pkg.scripts.build = build
    await writeFile(join(dir, 'package.json'), JSON.stringify(pkg, null, 2))
  }
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) }
}

/** The environment of a child that runs npm on its own: no npm or jest variables of this run. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(npm_|NODE_OPTIONS$|JEST_|AUTH_SECRET$|PORT$|HOST$|STORE$|STATIC_DIR$)/.test(name))
      env[name] = value
  }
  return { ...env, ...extra }
}

/** What `tsc --noEmit`, `npm run lint` and jest read: the sources, tests, scripts and every config file they use. */
export const lintedFiles = [
  'src',
  'test',
  'scripts',
  'examples',
  'bench',
  'public',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  '.prettierrc.json',
  '.prettierignore',
  'eslint.config.js',
  '.dependency-cruiser.cjs',
  'jest.config.js',
  // The one file of the docs site a test imports (test/docs/links.test.ts: the site's heading anchors).
  'docs/.vitepress/anchor.ts'
]

/**
 * A throw-away copy of `names` (default: what type-checking, linting and the tests read), with the checkout's
 * node_modules linked in; built and generated files (dist, public/app.js, bench results) stay behind.
 */
export async function copyRepository(names: readonly string[] = lintedFiles): Promise<CheckoutCopy> {
  const dir = await mkdtemp(join(tmpdir(), 'plumage-repository-'))
  const skipped = [join('public', 'app.js'), join('bench', 'results'), join('test-artifacts')]
  for (const name of names)
    await cp(join(root, name), join(dir, name), {
      recursive: true,
      filter: (path) => !skipped.some((skip) => path.endsWith(skip))
    })
  await symlink(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir')
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) }
}

/**
 * What `npm run lint` says of a change made in `copy` since `since` (ms): prettier and eslint on the files written
 * since then (eslint's rules here read one file at a time, and deletions break imports, which tsc reports), and
 * the dependency rules on all of src. The whole-project lint of a copy costs a CI run half a minute of CPU each time.
 */
export async function lintChanged(copy: CheckoutCopy, since: number): Promise<string[]> {
  const changed: string[] = []
  for (const name of lintedFiles) {
    const path = join(copy.dir, name)
    const found = await stat(path).catch(() => undefined)
    if (!found) continue
    const entries = found.isDirectory()
      ? (await readdir(path, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile())
      : []
    for (const file of entries.length ? entries.map((entry) => join(entry.parentPath, entry.name)) : [path])
      if ((await stat(file)).mtimeMs >= since) changed.push(relative(copy.dir, file))
  }
  const bin = (name: string) => join(copy.dir, 'node_modules', '.bin', name)
  const options = { cwd: copy.dir, env: cleanEnv() }
  await Promise.all([
    exec(bin('prettier'), ['--check', '--ignore-unknown', ...changed], options),
    exec(bin('eslint'), ['--no-warn-ignored', ...changed.filter((file) => /\.(ts|js|mjs|cjs)$/.test(file))], options),
    exec(bin('depcruise'), ['src', '--config', '.dependency-cruiser.cjs'], options)
  ])
  return changed
}
