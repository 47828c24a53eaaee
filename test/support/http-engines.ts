import type { HttpEngineFactory } from '../../src/container.js'
import { modules } from '../../src/modules/index.js'
import { expressEngine } from '../../src/interfaces/rest/rest-app.js'

/**
 * Every HTTP engine: express and each registered engine module's (loaded to ask), so that suites over every
 * engine follow the registry: deleting fastify's module deletes no other test.
 */
export async function allHttpEngines(): Promise<Record<string, HttpEngineFactory>> {
  const loaded = await Promise.all(Object.values(modules).flatMap((entry) => (entry.http ? [entry.load()] : [])))
  return Object.assign({ express: expressEngine }, ...loaded.map(({ module }) => module.httpEngines ?? {}))
}
