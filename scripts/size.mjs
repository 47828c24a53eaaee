#!/usr/bin/env node
/**
 * `npm run size`: what a process loads, in lines of src. For each entry it follows the static imports
 * that survive compilation (TypeScript drops type-only ones), not dynamic `import()` — a module loaded
 * only when configuration selects it is not counted. Prints files and lines per entry, and fails when
 * an entry is over its limit, a src file is over 400 lines or a function over 80.
 *
 *   npm run size            the report and the limits
 *   npm run size -- --json  the same as JSON (used by test/scripts/size.test.ts)
 */
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')

/** The entries and their limits (ADR 0017): the server as `npm start` loads it, and the kernel. */
export const entries = [
  { name: 'server (src/main.ts)', file: 'src/main.ts', limit: 8900 },
  { name: 'kernel (src/application/app.ts)', file: 'src/application/app.ts', limit: 1750 }
]
export const fileLimit = 400
export const functionLimit = 80

const lines = (text) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0)

/** The relative imports of one file that remain in its JavaScript, as absolute .ts paths. */
function valueImports(file) {
  const source = readFileSync(file, 'utf8')
  const js = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, experimentalDecorators: true },
    fileName: file
  }).outputText
  const parsed = ts.createSourceFile(file + '.js', js, ts.ScriptTarget.ES2022)
  const found = []
  for (const statement of parsed.statements) {
    const specifier =
      (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier
        ? statement.moduleSpecifier.text
        : undefined
    if (!specifier?.startsWith('.')) continue
    found.push(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')))
  }
  return found
}

/** Every src file an entry loads statically, with its lines. */
export function closure(entry) {
  const seen = new Map()
  const visit = (file) => {
    if (seen.has(file)) return
    seen.set(file, lines(readFileSync(file, 'utf8')))
    for (const next of valueImports(file)) visit(next)
  }
  visit(resolve(root, entry))
  return [...seen].map(([file, count]) => ({ file: relative(root, file), lines: count }))
}

function sourceFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : []
  })
}

/** Files over the file limit, and functions (declarations, methods, arrows) over the function limit. */
export function oversized() {
  const files = []
  const functions = []
  for (const path of sourceFiles(join(root, 'src'))) {
    const text = readFileSync(path, 'utf8')
    const file = relative(root, path)
    if (lines(text) > fileLimit) files.push({ file, lines: lines(text) })
    // The kit's suites (src/testing) are lists of cases inside describe() callbacks: files are limited, functions not.
    if (file.startsWith('src/testing/')) continue
    const source = ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, true)
    const visit = (node) => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line
        const end = source.getLineAndCharacterOfPosition(node.getEnd()).line
        if (end - start + 1 > functionLimit) {
          const name = node.name && ts.isIdentifier(node.name) ? node.name.text : '(anonymous)'
          functions.push({ file, line: start + 1, name, lines: end - start + 1 })
        }
      }
      ts.forEachChild(node, visit)
    }
    visit(source)
  }
  return { files, functions }
}

export function report() {
  return {
    entries: entries.map(({ name, file, limit }) => {
      const files = closure(file)
      return { name, file, limit, files: files.length, lines: files.reduce((sum, f) => sum + f.lines, 0) }
    }),
    ...oversized()
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = report()
  if (process.argv.includes('--json')) {
    process.stdout.write(JSON.stringify(result, null, 2) + '\n')
  } else {
    for (const e of result.entries)
      console.log(
        `${e.name}: ${e.files} files, ${e.lines} lines (limit ${e.limit})${e.lines > e.limit ? '  OVER' : ''}`
      )
    for (const f of result.files) console.log(`file over ${fileLimit} lines: ${f.file} (${f.lines})`)
    for (const f of result.functions)
      console.log(`function over ${functionLimit} lines: ${f.file}:${f.line} ${f.name} (${f.lines})`)
  }
  const failed = result.entries.some((e) => e.lines > e.limit) || result.files.length + result.functions.length > 0
  process.exitCode = failed ? 1 : 0
}
