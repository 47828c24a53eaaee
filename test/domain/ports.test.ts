import { describe, expect, it } from '@jest/globals'
import { readdirSync, readFileSync } from 'node:fs'
import * as ports from '../../src/domain/ports.js'

/*
 * The map cannot drift from the code: src/domain/ports.ts names every port, README's architecture map
 * lists the same ones (in the diagram and in the src/domain paragraph), and every token the domain
 * declares is either a port in the barrel or named below as not being one.
 */

/** Tokens in src/domain that are not ports: nothing implements them, they carry a value. */
const NOT_PORTS: Readonly<Record<string, string>> = {
  RecoverySettings: 'a setting (SOCKET_RECOVERY_WINDOW) bound as a value, not an adapter'
}

const readme = readFileSync('README.md', 'utf8')
const exported = Object.keys(ports).sort()

/** The names in the diagram's `ports[ports: A, B, …]` node. */
function diagramPorts(): string[] {
  const node = /ports\[ports: ([^\]]+)\]/.exec(readme)
  if (!node) throw new Error('README: the diagram has no ports[ports: …] node')
  return node[1]!.split(',').map((name) => name.trim())
}

/** The backticked names of the README bullet that describes src/domain, up to the next bullet. */
function paragraphPorts(): string[] {
  const start = readme.indexOf('- **src/domain**')
  if (start < 0) throw new Error('README: no "- **src/domain**" bullet')
  const end = readme.indexOf('\n- **', start + 1)
  const bullet = readme.slice(start, end)
  return [...bullet.matchAll(/`([A-Z][A-Za-z]+)`/g)].map((match) => match[1]!)
}

/** Every `export const X = Symbol.for('X')` under src/domain. */
function domainTokens(): string[] {
  const files = readdirSync('src/domain', { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ts'))
  return files.flatMap((file) =>
    [...readFileSync(`src/domain/${file}`, 'utf8').matchAll(/export const (\w+) = Symbol\.for\('(\w+)'\)/g)].map(
      (match) => {
        if (match[1] !== match[2]) throw new Error(`src/domain/${file}: ${match[1]} is Symbol.for('${match[2]}')`)
        return match[1]!
      }
    )
  )
}

describe('the map of ports', () => {
  it('exports from src/domain/ports.ts only tokens, each Symbol.for its own name', () => {
    for (const name of exported) expect(ports[name as keyof typeof ports]).toBe(Symbol.for(name))
  })

  it('lists in the README diagram exactly the ports of the barrel', () => {
    expect(diagramPorts().sort()).toEqual(exported)
  })

  it('lists in the README src/domain paragraph exactly the ports of the barrel', () => {
    expect(paragraphPorts().sort()).toEqual(exported)
  })

  it('puts every token the domain declares in the barrel, unless it is named as not a port', () => {
    const tokens = domainTokens()
    expect(tokens.filter((name) => !(name in NOT_PORTS)).sort()).toEqual(exported)
    for (const name of Object.keys(NOT_PORTS)) expect(tokens).toContain(name)
  })
})
