import { loadConfig, type Config } from '../../src/infrastructure/config/config.js'
import { BENCH_SECRET } from './auth-setup.js'

/**
 * The settings of a plumage server that a bench starts in process: the memory store, a known secret, a day-long
 * token, any free port, and nothing that is not measured (metrics, API documents, static files, logs below errors).
 */
export function benchConfig(extra: Record<string, string> = {}): Config {
  return loadConfig({
    STORE: 'memory',
    AUTH_SECRET: BENCH_SECRET,
    JWT_EXPIRES_IN: '1d',
    PORT: '0',
    METRICS: 'false',
    LOG_LEVEL: 'error',
    API_DOCS: 'false',
    STATIC_DIR: '',
    ...extra
  })
}
