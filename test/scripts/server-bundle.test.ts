import { beforeAll, describe, expect, it } from '@jest/globals'
import { execFileSync } from 'node:child_process'

/*
 * What dist/plumage.mjs and its chunks (dist/chunks) hold, as scripts/build-options.mjs configures it
 * (BENCHMARKS.md, issue 25's cold start): the packages every start loads are inside, once per version, what
 * loads on first use and pino are not, and the files are pure ASCII — V8 keeps a module's source for as long as
 * it runs, as two bytes a character when one character is not ASCII.
 */
interface Bundle {
  /** The packages (node_modules/<name>) with files in the bundle. */
  packages: string[]
  /** The bare imports and requires left to node_modules. */
  external: string[]
  /** Characters of the output outside ASCII. */
  nonAscii: string[]
  /** Each bundled package's name@version and the installed folders its files came from. */
  copies: Record<string, string[]>
  /** Whether mime-db's db.json is in the output as a string given to JSON.parse (rather than an object literal). */
  jsonAsString: boolean
}

let bundle: Bundle

beforeAll(() => {
  const script = `
    const { build } = await import('esbuild')
    const { serverOptions } = await import('./scripts/build-options.mjs')
    const { metafile, outputFiles } = await build({ ...serverOptions(), write: false, metafile: true, logLevel: 'silent' })
    // The entry and its chunks (the modules configuration selects are chunks of their own, imported when selected).
    const code = outputFiles.filter((file) => file.path.endsWith('.mjs')).map((file) => file.text).join('\\n')
    const outputs = Object.values(metafile.outputs)
    const { readFileSync } = await import('node:fs')
    const packages = new Set()
    const copies = {}
    for (const path of Object.keys(metafile.inputs)) {
      if (!path.includes('node_modules/')) continue
      const rest = path.split('node_modules/').at(-1).split('/')
      const name = rest[0].startsWith('@') ? rest[0] + '/' + rest[1] : rest[0]
      const folder = path.slice(0, path.lastIndexOf('node_modules/')) + 'node_modules/' + name
      const key = name + '@' + JSON.parse(readFileSync(folder + '/package.json', 'utf8')).version
      packages.add(name)
      copies[key] = [...new Set([...(copies[key] ?? []), folder])]
    }
    const external = [...new Set(outputs.flatMap((output) => output.imports.filter((entry) => entry.external).map((entry) => entry.path)))]
    const jsonAsString = /JSON\\.parse\\(['"\`]\\{\\\\?"application\\/1d-interleaved-parityfec/.test(code)
    const nonAscii = code.match(/[^\\x00-\\x7f]/g) ?? []
    console.log(JSON.stringify({ packages: [...packages], external, nonAscii, copies, jsonAsString }))`
  bundle = JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
  ) as Bundle
}, 60_000)

describe('the server bundle', () => {
  it('holds the packages every start loads', () => {
    expect(bundle.packages).toEqual(
      expect.arrayContaining([
        'express',
        'socket.io',
        'socket.io-adapter',
        'engine.io',
        'prom-client',
        'qs',
        'inversify'
      ])
    )
  })

  it('leaves what loads on first use, and pino, to node_modules', () => {
    const lazy = [
      'bcrypt',
      'pg',
      'rethinkdb-ts',
      'fastify',
      'jsonwebtoken',
      'ajv',
      'pino',
      '@opentelemetry/sdk-trace-node'
    ]
    expect(bundle.packages.filter((name) => lazy.includes(name))).toEqual([])
    expect(bundle.external).toEqual(
      expect.arrayContaining(['pino', '@fastify/static', '@opentelemetry/sdk-trace-node'])
    )
  })

  it('holds one copy of each package version, and one mime-db', () => {
    const repeated = Object.entries(bundle.copies).filter(([, folders]) => folders.length > 1)
    expect(repeated).toEqual([])
    expect(Object.keys(bundle.copies).filter((key) => key.startsWith('mime-db@'))).toHaveLength(1)
    // debug 4 is installed under several of the bundled packages: one of them serves all
    expect(Object.keys(bundle.copies).filter((key) => key.startsWith('debug@'))).toHaveLength(1)
  })

  it('leaves iconv-lite, whose encodings load on first use, to node_modules', () => {
    expect(bundle.packages).not.toContain('iconv-lite')
    expect(bundle.external).toContain('iconv-lite')
  })

  it("holds packages' JSON as strings for JSON.parse, not as code", () => {
    expect(bundle.jsonAsString).toBe(true)
  })

  it('is pure ASCII', () => {
    expect(bundle.nonAscii).toEqual([])
  })
})
