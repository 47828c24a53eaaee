import { describe, expect, it } from '@jest/globals'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

/*
 * What `npm install` and a copy of the template need from package.json: every package the server
 * runs on accepts the Node.js versions `engines` promises (npm warns otherwise), every dependency
 * with an install script is approved or denied in `allowScripts` (npm 11 warns about the others),
 * and the project says under which licence it may be copied.
 */
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
  license: string
  engines: { node: string }
  allowScripts: Record<string, boolean>
}
interface Locked {
  dev?: boolean
  engines?: { node?: string } | string[]
  hasInstallScript?: boolean
}
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, Locked> }
const semver = createRequire(import.meta.url)('semver') as {
  minVersion(range: string): { version: string } | null
  satisfies(version: string, range: string): boolean
}
const nameOf = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)

describe('package.json', () => {
  it("keeps engines honest: no runtime dependency needs a newer Node.js than its lowest (e.g. cookie 2's Node 22)", () => {
    const lowest = semver.minVersion(pkg.engines.node)!.version
    const refusing = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && !entry.dev)
      .flatMap(([path, { engines }]) => {
        const node = engines && !Array.isArray(engines) ? engines.node : undefined
        return node && !semver.satisfies(lowest, node) ? [`${nameOf(path)} needs node ${node}`] : []
      })
    expect(refusing).toEqual([])
  })

  it('approves or denies every install script in allowScripts', () => {
    const unreviewed = Object.entries(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript)
      .map(([path]) => nameOf(path))
      .filter((name) => !(name in pkg.allowScripts))
    expect(unreviewed).toEqual([])
  })

  it('is MIT licensed, with the licence text beside it', () => {
    expect(pkg.license).toBe('MIT')
    const licence = readFileSync('LICENSE', 'utf8')
    expect(licence).toMatch(/^MIT License\n\nCopyright \(c\) the plumage authors\n/)
    expect(licence).toContain('THE SOFTWARE IS PROVIDED "AS IS"')
  })
})
