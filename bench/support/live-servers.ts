import 'reflect-metadata'
import type { AddressInfo } from 'node:net'
import { MemoryService } from '@feathersjs/memory'
import { AdapterService } from '../../src/application/adapter-service.js'
import { App } from '../../src/application/app.js'
import { LiveQueries } from '../../src/application/live/index.js'
import { buildContainer, createHttpEngine, startRealtime, stopModules } from '../../src/container.js'
import { InMemoryStore } from '../../src/infrastructure/memory/in-memory-store.js'
import { createFeathersReferenceApp } from './feathers-reference-app.js'
import { ITEMS, type Item } from './live-workload.js'
import { benchConfig } from './plumage-config.js'

/** A server of `npm run bench:live`, listening on 127.0.0.1. */
export interface LiveServer {
  url: string
  /** Creates the records (one by one, as a client would) and answers them with their ids. */
  seed(records: Omit<Item, 'id'>[]): Promise<Item[]>
  /** plumage: what its views hold (LiveQueries.size); Feathers: nothing, its clients hold the views. */
  views(): { views: number; watches: number; records: number } | undefined
  close(): Promise<void>
}

type Creates = { create(data: unknown): Promise<unknown> }

async function seedInto(service: Creates, records: Omit<Item, 'id'>[]): Promise<Item[]> {
  const created: Item[] = []
  for (const record of records) created.push((await service.create(record)) as Item)
  return created
}

/**
 * plumage as `npm start` builds it (src/container.ts, the memory store, the live-queries module on, its reference
 * services), plus an open `items` service (memory, not paginated) whose events go to no channel: a socket hears of
 * them only through its watches. `maxWatches` raises LIVE_MAX_WATCHES when a socket holds more than the default.
 */
export async function startLivePlumage({ maxWatches = 100 }: { maxWatches?: number } = {}): Promise<LiveServer> {
  const container = await buildContainer(benchConfig({ LIVE_MAX_WATCHES: String(Math.max(100, maxWatches)) }))
  const app = container.get<App>(App)
  app.use(ITEMS, new AdapterService(new InMemoryStore()))
  app.service(ITEMS).publish(() => null)
  await app.setup()
  const engine = createHttpEngine(container)
  const realtime = startRealtime(container, engine.server)
  const http = await engine.listen(0, '127.0.0.1')
  const live = container.get<LiveQueries>(LiveQueries)
  return {
    url: http.url,
    seed: (records) => seedInto(app.service(ITEMS) as Creates, records),
    views: () => live.size,
    close: async () => {
      realtime?.disconnectAll()
      await http.close()
      await stopModules(container)
    }
  }
}

/**
 * The Feathers v5 reference app (express + socket.io + memory, bench/support/feathers-reference-app.ts) with the same
 * open `items` service (@feathersjs/memory, not paginated), whose events go to every connection: feathers-reactive
 * matches them against its queries in each client.
 */
export async function startLiveFeathers(): Promise<LiveServer> {
  const app = createFeathersReferenceApp()
  app.use(ITEMS, new MemoryService({ id: 'id' }) as never)
  const channels = app as unknown as { channel(...names: string[]): unknown }
  ;(app.service(ITEMS) as unknown as { publish(fn: () => unknown): void }).publish(() =>
    channels.channel('anonymous', 'authenticated')
  )
  const http = await app.listen(0, '127.0.0.1')
  if (!http.listening) await new Promise((resolve) => http.once('listening', resolve))
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    seed: (records) => seedInto(app.service(ITEMS) as unknown as Creates, records),
    views: () => undefined,
    close: async () => {
      await new Promise<void>((resolve) => {
        const io = (app as unknown as { io?: { close(done: () => void): void } }).io
        if (io) io.close(() => resolve())
        else http.close(() => resolve())
      })
    }
  }
}

export const liveServers: Record<string, (options: { maxWatches?: number }) => Promise<LiveServer>> = {
  plumage: startLivePlumage,
  feathers: startLiveFeathers
}
