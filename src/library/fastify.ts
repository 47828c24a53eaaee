/**
 * `plumage/fastify`: the fastify module's HTTP engine (src/interfaces/fastify), the same wire as
 * express, as a library user starts it: `fastifyEngine(app, options)`, then `socketIoTransport` from
 * `plumage/server` on its `server`. A module's face: deleting the module deletes this entry too.
 *
 * @module plumage/fastify
 */
export { fastifyEngine, type FastifyAppOptions, type FastifyFormatter } from '../interfaces/fastify/fastify-app.js'
export type { HttpAppOptions, HttpEngine } from '../interfaces/http/http-engine.js'
export type { RunningServer } from '../interfaces/http/http-server.js'
