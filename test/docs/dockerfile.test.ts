import { describe, expect, it } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

/*
 * `docker build` works with whatever the build reads: every file that goes into the two bundles
 * (the server's and the chat page's, as scripts/build-options.mjs configures them) and the type
 * check's tsconfig lies under something the Dockerfile's build stage copies. Services in
 * src/services are built; code under examples/ must not be imported by the build.
 */
const dockerfile = readFileSync('Dockerfile', 'utf8')
const stages = dockerfile.split(/^FROM /m).slice(1)
const buildStage = stages[0]!
/** Sources of the build stage's `COPY a b ./dest` lines. */
const copied = [...buildStage.matchAll(/^COPY (?!--)(.+)$/gm)].flatMap((match) =>
  match[1]!.trim().split(/\s+/).slice(0, -1)
)

/** The files esbuild reads for both bundles, from the project's own build options. */
function bundleInputs(): string[] {
  const script = `
    const { build } = await import('esbuild')
    const { serverOptions, clientOptions } = await import('./scripts/build-options.mjs')
    const inputs = []
    for (const options of [serverOptions(), clientOptions()]) {
      const { metafile } = await build({ ...options, write: false, metafile: true, logLevel: 'silent' })
      inputs.push(...Object.keys(metafile.inputs))
    }
    console.log(JSON.stringify(inputs))`
  return JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
  ) as string[]
}

describe('the Dockerfile', () => {
  it('has a build stage and a runtime stage', () => {
    expect(stages).toHaveLength(2)
    expect(buildStage).toMatch(/^RUN npm run build$/m)
  })

  it('copies every file of the project that the bundles are built from', () => {
    const ours = bundleInputs().filter((path) => !path.includes('node_modules/'))
    expect(ours).toEqual(
      expect.arrayContaining(['src/main.ts', 'src/services/users/users.service.ts', 'src/interfaces/web/chat.ts'])
    )
    const missing = ours.filter(
      (path) => !copied.some((source) => path === source || path.startsWith(`${source.replace(/\/$/, '')}/`))
    )
    expect(missing).toEqual([])
    expect(ours.filter((path) => path.startsWith('examples/'))).toEqual([])
  })

  it('copies what npm run build runs: the build scripts and the tsconfig files of the type check', () => {
    const build = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { build: string } }).scripts.build
    const files = [...build.matchAll(/(scripts\/[\w.-]+|tsconfig[\w.-]*\.json)/g)].map((match) => match[1]!)
    expect(files.length).toBeGreaterThanOrEqual(3)
    const tsconfig = JSON.parse(readFileSync('tsconfig.build.json', 'utf8')) as { extends?: string; include: string[] }
    for (const path of [
      ...files,
      tsconfig.extends!.replace(/^\.\//, ''),
      ...tsconfig.include,
      'package.json',
      'package-lock.json'
    ]) {
      expect(`${path}: ${copied.some((source) => path === source || path.startsWith(`${source}/`))}`).toBe(
        `${path}: true`
      )
    }
  })

  it('ships the built server and the static page in the runtime stage', () => {
    expect(stages[1]).toMatch(/^COPY --from=build \/app\/dist\/plumage\.mjs /m)
    expect(stages[1]).toMatch(/^COPY --from=build \/app\/public \.\/public$/m)
  })
})
