import { execFile } from 'node:child_process'
import { copyFile, mkdir, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'

/*
 * plumage as `npm pack` ships it, installed in a throw-away project: the library compiled as `npm run build`
 * compiles it (tsconfig.build.json, into a staging copy of the package, so no other run's dist/ is touched),
 * packed by npm from the package.json's `files`, and the tarball unpacked where `npm install <tarball>` puts
 * it (node_modules/plumage). The project lives under node_modules/.cache, so the package's own dependencies
 * (express, socket.io, …) and the official Feathers clients resolve from the checkout's node_modules, as they
 * would from the project's own after an install — without a registry.
 */
const run = promisify(execFile)
const root = process.cwd()

export interface PackedProject {
  /** The throw-away project's folder (its package.json depends on plumage). */
  dir: string
  /** The tarball npm pack wrote. */
  tarball: string
  /** Runs TypeScript's compiler in the project with these arguments. */
  tsc(args: string[]): Promise<{ stdout: string; stderr: string }>
  /** Removes the project. */
  cleanup(): Promise<void>
}

export async function packedProject(name: string): Promise<PackedProject> {
  const dir = join(root, 'node_modules', '.cache', `plumage-${name}-${process.pid}`)
  const staging = join(dir, 'staging')
  await rm(dir, { recursive: true, force: true })
  await mkdir(staging, { recursive: true })
  for (const file of ['package.json', 'README.md', 'LICENSE']) await copyFile(join(root, file), join(staging, file))
  const tscPath = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
  await run(
    process.execPath,
    [tscPath, '-p', join(root, 'tsconfig.build.json'), '--outDir', join(staging, 'dist', 'lib')],
    {
      cwd: root
    }
  )
  const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], {
    cwd: staging
  })
  const tarball = join(dir, (JSON.parse(stdout) as { filename: string }[])[0]!.filename)
  await run('tar', ['-xzf', tarball, '-C', dir])
  await mkdir(join(dir, 'node_modules'), { recursive: true })
  await rename(join(dir, 'package'), join(dir, 'node_modules', 'plumage'))
  await rm(staging, { recursive: true, force: true })
  return {
    dir,
    tarball,
    tsc: (args) => run(process.execPath, [tscPath, ...args], { cwd: dir }),
    cleanup: () => rm(dir, { recursive: true, force: true })
  }
}

/** The packed package's file list, as `tar -t` reads it (paths under `package/`). */
export async function packedFiles(tarball: string): Promise<string[]> {
  const { stdout } = await run('tar', ['-tzf', tarball], { maxBuffer: 16 * 1024 * 1024 })
  return stdout.trim().split('\n')
}
