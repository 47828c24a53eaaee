import { createRequire } from 'node:module'
import { pino, type Logger as Pino, type LoggerOptions } from 'pino'
import type { Logger } from '../../domain/logger.js'
import type { Tracer } from '../../domain/tracing.js'
import type { Config } from '../config/config.js'

/**
 * The Logger port over pino; pretty output in development only (pino-pretty is a devDependency).
 * With tracing on, every line written inside a span carries its `trace_id` and `span_id` (the
 * request log lines too: they use the same pino); with tracing off there is no mixin at all.
 */
export class PinoLogger implements Logger {
  constructor(readonly pino: Pino) {}

  static fromConfig(config: Pick<Config, 'logLevel' | 'env'>, tracer?: Tracer): PinoLogger {
    // pino-pretty is a devDependency: an install with --omit=dev logs JSON even in a terminal.
    const pretty = config.env === 'development' && process.stdout.isTTY && isInstalled('pino-pretty')
    return new PinoLogger(
      pino({
        level: config.logLevel,
        redact: SECRET_FIELDS,
        serializers: ERROR_FIELDS,
        ...(tracer?.enabled ? { mixin: () => traceFields(tracer) } : {}),
        ...(pretty ? { transport: { target: 'pino-pretty', options: { colorize: true } } } : {})
      })
    )
  }

  debug(message: string, details?: Record<string, unknown>): void {
    this.pino.debug(details ?? {}, message)
  }
  info(message: string, details?: Record<string, unknown>): void {
    this.pino.info(details ?? {}, message)
  }
  warn(message: string, details?: Record<string, unknown>): void {
    this.pino.warn(details ?? {}, message)
  }
  error(message: string, details?: Record<string, unknown>): void {
    this.pino.error(details ?? {}, message)
  }
}

/**
 * The fields the app logs errors under (`logger.warn(message, { error })`), serialized as pino serializes `err`:
 * type, message, stack and the error's own fields. pino's default serializers cover `err` only; an Error under
 * another name became `{}` (its fields are not enumerable), so every logged failure lost its message.
 */
export const ERROR_FIELDS: NonNullable<LoggerOptions['serializers']> = {
  error: pino.stdSerializers.err,
  err: pino.stdSerializers.err
}

/**
 * Request log lines (REQUEST_LOG) carry the request's headers: the bearer token and cookies are
 * credentials, shown as `***`.
 */
export const SECRET_FIELDS = {
  paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'],
  censor: '***'
}

/** The OpenTelemetry log-correlation fields of the active span; none outside spans. */
function traceFields(tracer: Tracer): Record<string, string> {
  const ids = tracer.ids()
  return ids ? { trace_id: ids.traceId, span_id: ids.spanId } : {}
}

function isInstalled(name: string): boolean {
  try {
    createRequire(import.meta.url).resolve(name)
    return true
  } catch {
    return false
  }
}
