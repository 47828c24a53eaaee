import { readFile } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'
import type { Server } from 'socket.io'
import type { Logger } from '../../domain/logger.js'
import { errorResponse, toFeathersError } from '../http/error-response.js'
import { pathOf, respond } from '../http/http-extension.js'

/**
 * The browser client files socket.io serves with its `serveClient` option, from its own `client-dist` folder (built
 * from the socket.io-client of the same release, so the client always matches the server). The msgpack build is left
 * out: plumage speaks socket.io's default parser, which that client cannot talk to.
 */
const FILES = new Set(['socket.io.js', 'socket.io.min.js', 'socket.io.esm.min.js'].flatMap((js) => [js, `${js}.map`]))

/** A file's body in each encoding a client may ask for, compressed once, and its ETag. */
interface Variants {
  identity: Buffer
  br: Buffer
  gzip: Buffer
  etag: string
}

/** socket.io's package.json, found from here (node_modules in a clone, an install or beside the server bundle). */
const socketIoPackage = () => createRequire(import.meta.url).resolve('socket.io/package.json')

async function load(file: string): Promise<Variants> {
  const packageJson = socketIoPackage()
  const { version } = JSON.parse(await readFile(packageJson, 'utf8')) as { version: string }
  const identity = await readFile(join(dirname(packageJson), 'client-dist', file))
  const [br, gz] = await Promise.all([
    promisify(brotliCompress)(identity, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
    promisify(gzip)(identity, { level: 9 })
  ])
  return { identity, br, gzip: gz, etag: `"${version}"` }
}

/** Whether an `Accept-Encoding` header accepts `coding` (named, not refused with `q=0`). */
function accepts(header: string | undefined, coding: 'br' | 'gzip'): boolean {
  for (const part of (header ?? '').split(',')) {
    const [name, ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase())
    if (name !== coding) continue
    const q = parameters.find((parameter) => parameter.startsWith('q='))
    return q === undefined || Number(q.slice(2)) > 0
  }
  return false
}

/**
 * Serves `/socket.io/socket.io.js` and its variants (the script an unchanged Feathers chat page loads from the server)
 * from engine.io's request handling, in place of socket.io's `serveClient`, which is left off for two reasons:
 * - socket.io compresses the file again for every request (brotli at its highest quality: ~0.3 s of CPU for
 *   socket.io.js, ~0.6 s for its map), so a few requests a second would take the CPU from every other request; here
 *   each file is compressed once, on its first request, and kept;
 * - it reads the files from a path relative to its own source file, which no longer exists once socket.io is bundled
 *   into dist/plumage.mjs (`npm start` crashed on the first request for the script); here the folder is found
 *   through socket.io's package.json.
 * Only requests under socket.io's path reach engine.io's handler, so every other request costs what it did before.
 */
export function serveClientScript(io: Server, logger: Logger): void {
  const engine = io.engine as unknown as { handleRequest(req: IncomingMessage, res: ServerResponse): void }
  const handle = engine.handleRequest.bind(engine)
  const prefix = `${io.path()}/`
  const files = new Map<string, Promise<Variants>>()
  engine.handleRequest = (req, res) => {
    const file = pathOf(req.url ?? '').slice(prefix.length)
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !FILES.has(file)) return handle(req, res)
    if (!files.has(file)) files.set(file, load(file))
    files.get(file)!.then(
      (variants) => send(variants, file.endsWith('.map'), req, res),
      (thrown: unknown) => {
        files.delete(file)
        const { status, headers, body } = errorResponse(toFeathersError(thrown, logger, `GET ${prefix}${file}`))
        respond(res, status, headers, body)
      }
    )
  }
}

/** The answer socket.io would give (types, ETag and 304, cache policy), with `Vary` and `Content-Length`. */
function send(variants: Variants, map: boolean, req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('ETag', variants.etag)
  res.setHeader('Cache-Control', 'public, max-age=0')
  res.setHeader('Vary', 'Accept-Encoding')
  const match = req.headers['if-none-match']
  if (match === variants.etag || match === `W/${variants.etag}`) {
    res.statusCode = 304
    return void res.end()
  }
  const header = req.headers['accept-encoding']
  const encoding = accepts(header, 'br') ? 'br' : accepts(header, 'gzip') ? 'gzip' : 'identity'
  const body = variants[encoding]
  res.statusCode = 200
  res.setHeader('Content-Type', `application/${map ? 'json' : 'javascript'}; charset=utf-8`)
  if (encoding !== 'identity') res.setHeader('Content-Encoding', encoding)
  res.setHeader('Content-Length', body.length)
  res.end(body)
}
