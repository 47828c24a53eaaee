import { describe, expect, it } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
import { githubAnchor } from '../../docs/.vitepress/anchor.js'

/*
 * The repository stands alone: every link and every repository path the docs mention exists, and no
 * file points at documents that live outside it.
 */
/** README.md and the site's pages; TypeDoc's generated API reference is checked by the site's build and its test. */
const docs = [
  'README.md',
  ...readdirSync('docs', { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md') && !name.startsWith('reference/api/') && !name.startsWith('.vitepress/'))
    .map((name) => `docs/${name}`)
]

/** Tracked files plus new ones not yet committed (ignored files such as node_modules and dist do not count). */
const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { encoding: 'utf8' })
  .split('\n')
  .filter((file) => file !== '')
const folders = new Set(
  files.flatMap((file) =>
    file
      .split('/')
      .slice(0, -1)
      .map((_part, i, parts) => parts.slice(0, i + 1).join('/'))
  )
)
const exists = (path: string) => files.includes(path) || folders.has(path)
/** Top-level folders of the repository: a word starting with one of them is taken as a path. */
const roots = [...folders].filter((folder) => !folder.includes('/'))

function anchorsOf(doc: string): Set<string> {
  const text = readFileSync(doc, 'utf8').replace(/^```[\s\S]*?^```/gm, '')
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => githubAnchor(match[1]!)))
}

/** `[text](target)` links that are not URLs: [doc, target] pairs. */
function linksOf(doc: string): string[] {
  return [...readFileSync(doc, 'utf8').matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
}

/** Words that start with a top-level folder (`src/…`, `docs/…`, `test/…`), in prose, backticks or code. */
function pathsOf(text: string): string[] {
  const pattern = new RegExp(`(?<![\\w./@-])(?:${roots.join('|')})/[\\w./*-]*[\\w*]`, 'g')
  return [...new Set([...text.matchAll(pattern)].map((match) => match[0]))]
}

/**
 * What the README's own steps create in a clone — the generator's examples and the by-hand "Add a service" — and
 * test/scripts/generate.test.ts runs those steps: these paths exist once a reader follows them, not before.
 */
const CREATED_BY_THE_STEPS = new Set([
  'src/hooks',
  'src/hooks/log-calls.ts',
  'test/services',
  'src/services/todos',
  'src/services/todos/todos.service.ts'
])

/** Build outputs such as public/app.js are named by the docs but ignored by git; paths the README's steps create. */
function ignored(path: string): boolean {
  if (CREATED_BY_THE_STEPS.has(path)) return true
  try {
    execFileSync('git', ['check-ignore', '--quiet', '--no-index', path])
    return true
  } catch {
    return false
  }
}

/** A path with `*` matches a file or folder, with or without the extension the text left out. */
function matches(path: string): boolean {
  if (!path.includes('*')) return exists(path)
  const pattern = new RegExp(
    `^${path
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('[^/]*')}([./].*)?$`
  )
  return files.some((file) => pattern.test(file))
}

describe('links and paths in the docs', () => {
  it.each(docs)('%s links only to files and headings that exist', (doc) => {
    const links = linksOf(doc)
    const broken: string[] = []
    for (const link of links) {
      const [target, fragment] = link.split('#') as [string, string | undefined]
      const file = target === '' ? doc : normalize(join(dirname(doc), target))
      if (!exists(file)) broken.push(link)
      else if (fragment !== undefined && file.endsWith('.md') && !anchorsOf(file).has(fragment)) broken.push(link)
    }
    expect(broken).toEqual([])
  })

  it.each(docs)('%s names only repository paths that exist', (doc) => {
    const paths = pathsOf(readFileSync(doc, 'utf8'))
    expect(paths.filter((path) => !matches(path) && !ignored(path))).toEqual([])
  })

  it('finds links and paths to check', () => {
    expect(docs.flatMap(linksOf).length).toBeGreaterThan(5)
    expect(docs.flatMap((doc) => pathsOf(readFileSync(doc, 'utf8'))).length).toBeGreaterThan(30)
  })
})

describe('no references outside the repository', () => {
  // Spelled in pieces so that this file does not match itself.
  const outside = new RegExp(
    ['PROTOCOL', 'SPEC', 'DESIGN', 'RETHINKDB'].map((name) => `\\b${name}\\.md\\b`).join('|') + '|\\.\\./' + 'shared'
  )

  it('no file of the repository mentions documents that are not in it', () => {
    const checked = files.filter((file) => file !== 'package-lock.json')
    expect(checked.length).toBeGreaterThan(100)
    const offending = checked.flatMap((file) => {
      let text: string
      try {
        text = readFileSync(file, 'utf8')
      } catch {
        return [] // deleted in the work tree
      }
      return text.split('\n').flatMap((line, i) => (outside.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : []))
    })
    expect(offending).toEqual([])
  })
})
