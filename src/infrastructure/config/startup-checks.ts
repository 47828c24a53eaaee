import { existsSync } from 'node:fs'
import { access, constants, stat } from 'node:fs/promises'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/*
 * What can stop a start besides a bad setting, said the way configuration errors are: one line that
 * names the variable to change (src/main.ts prints it after "plumage failed to start: ").
 */

/** A start refused by the machine (port taken, unknown host, unreadable folder); its message is the one line shown. */
export class StartupError extends Error {
  override readonly name = 'StartupError'
}

/**
 * The folder of the app: the nearest one above this module holding a package.json (the checkout
 * under jest, the checkout or the image's /app for dist/plumage.mjs). Relative paths in settings
 * are read from here, whatever the current directory.
 */
export function appRoot(from: string = import.meta.url): string {
  const start = dirname(fileURLToPath(from))
  for (let dir = start; dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir
  }
  return process.cwd()
}

/**
 * The static folder to serve: STATIC_DIR resolved against the app folder. A folder that does not
 * exist is a warning (the API still works; `npm run build` makes public/app.js) and nothing is
 * served; a path that is not a folder, or that cannot be read, refuses the start.
 */
export async function staticDirToServe(
  staticDir: string | undefined,
  warn: (message: string, fields?: Record<string, unknown>) => void,
  root: string = appRoot()
): Promise<string | undefined> {
  if (staticDir === undefined) return undefined
  const path = isAbsolute(staticDir) ? staticDir : resolve(root, staticDir)
  let info
  try {
    info = await stat(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw unreadable(path, error)
    warn(
      `STATIC_DIR ${path} does not exist: no static files are served (set STATIC_DIR to a folder, or empty to turn this off)`,
      { staticDir: path }
    )
    return undefined
  }
  if (!info.isDirectory())
    throw new StartupError(`STATIC_DIR ${path} is not a folder: set STATIC_DIR to a folder, or empty to serve no files`)
  try {
    await access(path, constants.R_OK | constants.X_OK)
  } catch (error) {
    throw unreadable(path, error)
  }
  return path
}

function unreadable(path: string, error: unknown): StartupError {
  const code = (error as NodeJS.ErrnoException).code ?? 'error'
  return new StartupError(
    `STATIC_DIR ${path} cannot be read (${code}): give the server's user read access, or set STATIC_DIR to another folder`
  )
}

/**
 * The one-line reason of a failed `listen` (port taken, port that needs privileges, HOST not an
 * address of this machine or not a known name), or undefined for any other error. `host` is the
 * HOST setting, so that a failed name lookup elsewhere (a database host) is not blamed on it.
 */
export function listenFailure(error: unknown, host: string | undefined): string | undefined {
  const { code, syscall, port, address, hostname } = (error ?? {}) as NodeJS.ErrnoException & {
    port?: number
    address?: string
    hostname?: string
  }
  if (syscall === 'listen') {
    if (code === 'EADDRINUSE') return `port ${port} is in use: set PORT to a free port`
    if (code === 'EACCES') return `port ${port} needs privileges on this machine: set PORT to 1024 or above`
    if (code === 'EADDRNOTAVAIL')
      return `HOST ${address} is not an address of this machine: set HOST to one of its addresses, e.g. 127.0.0.1, or 0.0.0.0 for all`
  }
  if (syscall === 'getaddrinfo' && host !== undefined && hostname === host) {
    return `HOST ${hostname} is not a known host name (getaddrinfo ${code}): set HOST to an address of this machine, e.g. 127.0.0.1, or 0.0.0.0 for all`
  }
  return undefined
}
