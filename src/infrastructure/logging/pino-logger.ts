import { createRequire } from 'node:module'
import { pino, type Logger as Pino } from 'pino'
import type { Logger } from '../../domain/logger.js'
import type { Config } from '../config/config.js'

/** The Logger port over pino; pretty output in development only (pino-pretty is a devDependency). */
export class PinoLogger implements Logger {
  constructor(readonly pino: Pino) {}

  static fromConfig(config: Pick<Config, 'logLevel' | 'env'>): PinoLogger {
    // pino-pretty is a devDependency: an install with --omit=dev logs JSON even in a terminal.
    const pretty = config.env === 'development' && process.stdout.isTTY && isInstalled('pino-pretty')
    return new PinoLogger(pino({
      level: config.logLevel,
      ...(pretty ? { transport: { target: 'pino-pretty', options: { colorize: true } } } : {})
    }))
  }

  debug(message: string, details?: Record<string, unknown>): void { this.pino.debug(details ?? {}, message) }
  info(message: string, details?: Record<string, unknown>): void { this.pino.info(details ?? {}, message) }
  warn(message: string, details?: Record<string, unknown>): void { this.pino.warn(details ?? {}, message) }
  error(message: string, details?: Record<string, unknown>): void { this.pino.error(details ?? {}, message) }
}

function isInstalled(name: string): boolean {
  try {
    createRequire(import.meta.url).resolve(name)
    return true
  } catch {
    return false
  }
}
