import { pino, type Logger as Pino } from 'pino'
import type { Logger } from '../../domain/logger.js'
import type { Config } from '../config/config.js'

/** The Logger port over pino; pretty output in development only (pino-pretty is a devDependency). */
export class PinoLogger implements Logger {
  constructor(readonly pino: Pino) {}

  static fromConfig(config: Pick<Config, 'logLevel' | 'env'>): PinoLogger {
    const pretty = config.env === 'development' && process.stdout.isTTY
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
