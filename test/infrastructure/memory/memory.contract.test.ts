import { Sessions } from '../../../src/application/sessions/sessions.js'
import { InMemoryConnectionSessions } from '../../../src/infrastructure/memory/in-memory-connection-sessions.js'
import { InMemoryLoginAttempts } from '../../../src/infrastructure/memory/in-memory-login-attempts.js'
import { InMemorySessionStore } from '../../../src/infrastructure/memory/in-memory-session-store.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'
import { InMemoryUniqueKeys } from '../../../src/infrastructure/memory/in-memory-unique-keys.js'
import {
  runConnectionSessionsContract,
  runLoginAttemptsContract,
  runSessionStoreContract,
  runStoreContract,
  runUniqueKeysContract
} from '../../../src/testing/index.js'

// The memory adapters against the kit: each runs the cases it names; the others are listed when its suite ends.
runStoreContract({
  adapter: 'memory',
  // It publishes its own changes (watch), live at once (no whenWatching), in one process (no publish, nothing
  // across processes).
  cases: ['queries', 'writes', 'indexes', 'cursors', 'live / watch'],
  open: async ({ id, watch }) => ({ store: new InMemoryStore({ id, watch }) })
})
// One process: the instances that share keys are one object.
const sharedKeys = new Map<string, InMemoryUniqueKeys>()
runUniqueKeysContract({
  adapter: 'memory',
  cases: 'all',
  open: (shared) => {
    if (shared === undefined) return new InMemoryUniqueKeys()
    if (!sharedKeys.has(shared)) sharedKeys.set(shared, new InMemoryUniqueKeys())
    return sharedKeys.get(shared)!
  }
})
runSessionStoreContract({
  sessions: (store, clock, tokens) => new Sessions(store, tokens, clock),
  adapter: 'memory',
  cases: 'all',
  open: () => new InMemorySessionStore()
})
runLoginAttemptsContract({ adapter: 'memory', cases: 'all', open: () => new InMemoryLoginAttempts() })
// Kept in this process: the sessions of another instance are not these.
runConnectionSessionsContract({
  adapter: 'memory',
  cases: ['in one process'],
  open: ({ clock, windowMs }) => new InMemoryConnectionSessions(clock, windowMs)
})
