import type { Container } from 'inversify'
import { App } from '../../src/application/app.js'
import { buildContainer, createHttpEngine, startRealtime } from '../../src/container.js'
import { LoginAttempts } from '../../src/domain/auth/login-attempts.js'
import { SessionStore } from '../../src/domain/auth/session-store.js'
import { Clock } from '../../src/domain/clock.js'
import { Logger } from '../../src/domain/logger.js'
import { StoreFactory } from '../../src/domain/store/store-factory.js'
import { loadConfig } from '../../src/infrastructure/config/config.js'

export const AUTH_SECRET = 'e2e-secret-0123456789abcdef'

export interface AuthServer {
  app: App
  /** The composition root's container (modules' parts are bound there). */
  container: Container
  url: string
  warnings: string[]
  close(): Promise<void>
}

/**
 * The real composition root (bcrypt cost 10, jsonwebtoken, reference app) behind REST and socket.io on 127.0.0.1:0,
 * on the HTTP engine `env.HTTP` names (express by default) with the real-time transport `env.REALTIME` names
 * (socket.io by default), with `/metrics` unless `env.METRICS` is false.
 * Login throttling is off unless `env` sets LOGIN_MAX_FAILURES: suites log in wrongly many times from
 * one address on purpose. Servers given the same `sessions`/`attempts` stores act as instances of one app.
 * `env` also reaches the store module (STORE=rethinkdb with RETHINKDB_URL); close() closes the store too.
 */
export async function startAuthServer(
  env: Record<string, string> = { AUTH_SECRET },
  overrides: { clock?: Clock; sessions?: SessionStore; attempts?: LoginAttempts } = {}
): Promise<AuthServer> {
  const config = loadConfig({ NODE_ENV: 'test', LOGIN_MAX_FAILURES: '0', ...env })
  const warnings: string[] = []
  const logger: Logger = {
    debug() {},
    info() {},
    error() {},
    warn: (message) => {
      warnings.push(message)
    }
  }
  const { sessions, attempts, ...replaced } = overrides
  const container = await buildContainer(config, {
    logger,
    env: { ...process.env, ...env },
    ...replaced,
    rebind: (bound) => {
      if (sessions) bound.rebind<SessionStore>(SessionStore).toConstantValue(sessions)
      if (attempts) bound.rebind<LoginAttempts>(LoginAttempts).toConstantValue(attempts)
    }
  })
  const app = container.get<App>(App)
  await app.setup()
  const engine = createHttpEngine(container)
  const realtime = startRealtime(container, engine.server)
  const running = await engine.listen(0, '127.0.0.1')
  return {
    app,
    container,
    url: running.url,
    warnings,
    async close() {
      realtime?.disconnectAll()
      await running.close()
      // As src/main.ts: socket calls still running end before the store closes.
      await app.idle()
      await app.teardown()
      await container.get<StoreFactory>(StoreFactory).close()
    }
  }
}
