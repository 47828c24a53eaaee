import { fastifyEngine } from '../interfaces/fastify/fastify-app.js'
import type { PlumageModule } from './module.js'

/** HTTP=fastify: the same wire as express on fastify (src/interfaces/fastify). */
export const module: PlumageModule = {
  httpEngines: { fastify: fastifyEngine }
}
