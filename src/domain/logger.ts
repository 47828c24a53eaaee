/** The logging port: pino in production, a silent or recording fake in tests. */
export interface Logger {
  debug(message: string, details?: Record<string, unknown>): void
  info(message: string, details?: Record<string, unknown>): void
  warn(message: string, details?: Record<string, unknown>): void
  error(message: string, details?: Record<string, unknown>): void
}
export const Logger = Symbol.for('Logger')

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} }
