import { BENCH_SECRET } from './auth-setup.js'
import { startChild, type Started } from './processes.js'

/** bcrypt's cost in the benches' servers: logins are not what they measure. */
export const BENCH_BCRYPT_ROUNDS = '4'

/**
 * Starts the built server (`main`, e.g. dist/plumage.mjs) as `npm start` runs it in production, on a free
 * port of 127.0.0.1, with the benches' JWT secret and `env` (the store's variables) on top; resolves with
 * its URL once it logged `plumage started`. Its warnings and errors are shown, prefixed with `name`; info
 * lines are not. `nodeArgs` go before `main` (e.g. `--cpu-prof`).
 */
export function spawnPlumage(
  name: string,
  main: string,
  env: NodeJS.ProcessEnv,
  nodeArgs: string[] = []
): Promise<Started<string>> {
  return startChild(
    name,
    process.execPath,
    [...nodeArgs, main],
    {
      ...process.env,
      AUTH_SECRET: BENCH_SECRET,
      BCRYPT_ROUNDS: BENCH_BCRYPT_ROUNDS,
      PORT: '0',
      HOST: '127.0.0.1',
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      REQUEST_LOG: 'false',
      ...env
    },
    (line) => {
      const entry = parseLog(line)
      return entry?.msg === 'plumage started' && typeof entry.url === 'string' ? entry.url : undefined
    },
    { after: (line) => ((parseLog(line)?.level ?? 50) >= 40 ? console.error(`[${name}] ${line}`) : undefined) }
  )
}

/** A line of the server's JSON log (pino), or undefined for any other line. */
export function parseLog(line: string): { msg?: string; url?: unknown; level?: number } | undefined {
  try {
    return JSON.parse(line) as { msg?: string; url?: unknown; level?: number }
  } catch {
    return undefined
  }
}
