/**
 * The floor of `bench:startup`: a bare express 5 + socket.io hello world answering `GET /health`, with nothing of
 * plumage. bench/startup.ts bundles it with the server's own esbuild settings (scripts/build-options.mjs: express and
 * socket.io in the bundle, as in dist/plumage.mjs) and spawns it the same way, so what plumage costs above it is
 * plumage's own.
 */
import express from 'express'
import { createServer } from 'node:http'
import { Server } from 'socket.io'

const app = express()
app.get('/health', (_req, res) => {
  res.json({ status: 'ok' })
})
const server = createServer(app)
const io = new Server(server)
io.on('connection', (socket) => socket.emit('hello', 'world'))
server.listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1')
