import { AdapterService } from '../src/application/adapter-service.js'
import { App } from '../src/application/app.js'
import type { HookContext } from '../src/application/hook-context.js'
import type { Clock } from '../src/domain/clock.js'
import { InMemoryStore } from '../src/infrastructure/memory/in-memory-store.js'

/** Before create: stamp `createdAt` with the server's clock (a client's clock cannot be trusted). */
export const stampCreatedAt =
  (clock: Clock) =>
  (context: HookContext): void => {
    const stamp = (item: unknown) => ({ ...(item as object), createdAt: clock.now() })
    context.data = Array.isArray(context.data) ? context.data.map(stamp) : stamp(context.data)
  }

/** Around every call, whatever the transport: `next()` runs the before hooks, the method and the after hooks. */
export const logDuration = (log: (line: string) => void) => async (context: HookContext, next: () => Promise<void>) => {
  const started = Date.now()
  try {
    await next()
  } finally {
    log(`${context.path}.${context.method} took ${Date.now() - started} ms`)
  }
}

/** Registration: service hooks by type and method; app hooks wrap every service's. */
export function useHooks(app: App, clock: Clock, log: (line: string) => void): void {
  app.service('messages').hooks({ before: { create: [stampCreatedAt(clock)] } })
  app.hooks({ around: { all: [logDuration(log)] } })
}

// `npm run example -- write-a-hook`: both hooks on a `messages` service over the memory store.
export async function main(): Promise<void> {
  const app = new App()
  app.use('messages', new AdapterService(new InMemoryStore(), { multi: ['create'] }))
  useHooks(app, { now: () => Date.now() }, (line) => console.log(line))
  const created = await app.service('messages').create([{ text: 'Hello' }, { text: 'Hi' }], {})
  console.log('created', created)
  console.log('found', await app.service('messages').find({}))
}
