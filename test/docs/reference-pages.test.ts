import { describe, expect, it } from '@jest/globals'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { modules } from '../../src/modules/index.js'

/*
 * The reference is complete: every store has its page, every module its row, every page a place in the site's
 * navigation. (Every configuration variable has its row: test/docs/readme.test.ts; every module folder is
 * drawn: test/docs/architecture-diagram.test.ts.) A store, a module or a page added without its documentation
 * fails here.
 */
const config = readFileSync('docs/.vitepress/config.ts', 'utf8')
/** The pages the site's navigation links to, as docs/ paths (`/tutorial/` is docs/tutorial/index.md). */
const linked = new Set(
  [...config.matchAll(/link: '(\/[^']*)'/g)].map((match) => {
    const link = match[1]!
    return `docs${link.endsWith('/') ? `${link}index` : link}.md`
  })
)

describe('the reference pages', () => {
  it('has a page for each store STORE accepts, linked from the navigation, and no page for a store that is gone', () => {
    const stores = ['memory', ...Object.values(modules).flatMap((module) => (module.store ? [module.store] : []))]
    expect(stores).toEqual(expect.arrayContaining(['memory', 'postgres', 'rethinkdb']))
    for (const store of stores) {
      const page = `docs/reference/stores/${store}.md`
      expect(`${page}: ${existsSync(page)}, linked ${linked.has(page)}`).toBe(`${page}: true, linked true`)
    }
    const pages = readdirSync('docs/reference/stores').map((name) => name.replace(/\.md$/, ''))
    expect(pages.sort()).toEqual([...stores].sort())
  })

  it('lists every module of the registry in the modules table, and the modules page shows that table', () => {
    const readme = readFileSync('README.md', 'utf8')
    const table = readme.split('<!-- modules -->')[1]!.trim().split('\n\n')[0]!.split('\n').slice(2)
    // The third column, "Registry line": a module's key in src/modules/index.ts, or — for a shared row.
    const lines = table.map((row) => row.split('|')[3]!.trim().replace(/`/g, '')).filter((line) => line !== '—')
    expect(lines.sort()).toEqual(Object.keys(modules).sort())
    expect(readme).toMatch(/<!-- #region modules -->\n<!-- modules -->/)
    expect(readFileSync('docs/reference/modules.md', 'utf8')).toContain('<!--@include: ../../README.md#modules-->')
  })

  it('links every written page from the navigation', () => {
    const pages = readdirSync('docs', { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.md') && !name.startsWith('reference/api/') && name !== 'index.md')
      .map((name) => `docs/${name}`)
    expect(pages.length).toBeGreaterThan(30)
    expect(pages.filter((page) => !linked.has(page) && !page.startsWith('docs/adr/'))).toEqual([])
    // ADRs are listed from their index, docs/adr/README.md, which the navigation links.
    expect(linked).toContain('docs/adr/README.md')
  })
})
