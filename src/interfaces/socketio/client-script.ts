import type { IncomingMessage, ServerResponse } from 'node:http'
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
  const files = new Map<string, Promise<(req: IncomingMessage, res: ServerResponse) => void>>()
  engine.handleRequest = (req, res) => {
    const file = pathOf(req.url ?? '').slice(prefix.length)
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !FILES.has(file)) return handle(req, res)
    // Reading, compressing and answering are loaded with the first request for one of the files (client-script-files).
    if (!files.has(file))
      files.set(
        file,
        import('./client-script-files.js').then(({ answerer }) => answerer(file))
      )
    files.get(file)!.then(
      (answer) => answer(req, res),
      (thrown: unknown) => {
        files.delete(file)
        const { status, headers, body } = errorResponse(toFeathersError(thrown, logger, `GET ${prefix}${file}`))
        respond(res, status, headers, body)
      }
    )
  }
}
