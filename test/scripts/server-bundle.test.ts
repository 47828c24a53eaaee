import { beforeAll, describe, expect, it } from '@jest/globals'
import { execFileSync } from 'node:child_process'

/*
 * What dist/plumage.mjs holds, as scripts/build-options.mjs configures it (BENCHMARKS.md, issue 25's
 * cold start): the packages every start loads are inside, what loads on first use and pino are not, and
 * the file is pure ASCII — V8 keeps a module's source for as long as it runs, as two bytes a character
 * when one character is not ASCII.
 */
interface Bundle {
  /** The packages (node_modules/<name>) with files in the bundle. */
  packages: string[]
  /** The bare imports and requires left to node_modules. */
  external: string[]
  /** Characters of the output outside ASCII. */
  nonAscii: string[]
}

let bundle: Bundle

beforeAll(() => {
  const script = `
    const { build } = await import('esbuild')
    const { serverOptions } = await import('./scripts/build-options.mjs')
    const { metafile, outputFiles } = await build({ ...serverOptions(), write: false, metafile: true, logLevel: 'silent' })
    const code = outputFiles.find((file) => file.path.endsWith('.mjs')).text
    const output = Object.values(metafile.outputs).find((entry) => entry.entryPoint)
    const packages = new Set()
    for (const path of Object.keys(metafile.inputs)) {
      const rest = path.split('node_modules/').at(-1).split('/')
      if (path.includes('node_modules/')) packages.add(rest[0].startsWith('@') ? rest[0] + '/' + rest[1] : rest[0])
    }
    const external = output.imports.filter((entry) => entry.external).map((entry) => entry.path)
    console.log(JSON.stringify({ packages: [...packages], external, nonAscii: code.match(/[^\\x00-\\x7f]/g) ?? [] }))`
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

  it('is pure ASCII', () => {
    expect(bundle.nonAscii).toEqual([])
  })
})
