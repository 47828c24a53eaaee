import { readFile } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'

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

/** What answers the requests for `file` (one of client-script.ts's FILES), its variants made once. */
export async function answerer(file: string): Promise<(req: IncomingMessage, res: ServerResponse) => void> {
  const variants = await load(file)
  return (req, res) => send(variants, file.endsWith('.map'), req, res)
}
