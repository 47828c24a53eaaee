/** The tracing module's part in the transports: server spans of socket handshakes and calls. */
export { realtimeTracing } from './realtime-tracing.js'
