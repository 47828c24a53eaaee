import { fromArguments, STANDARD_METHODS } from '../domain/service/method-layout.js'
import type { Params } from '../domain/service/service.js'
import type { AppCore } from './app-core.js'
import type { Publisher } from './channel.js'
import type { AroundHook, EventListener, HandleMembers, HookContext, HookMap } from './hook-context.js'
import type { HookPipeline } from './hook-pipeline.js'
import type { ServiceEntry } from './service-entry.js'
import type { ServiceEvents } from './service-events.js'

/** What a handle uses of the app's core: calls, hooks of its service, custom events and publishers. */
export interface HandleCore {
  readonly run: AppCore['run']
  readonly pipeline: Pick<HookPipeline, 'addServiceHooks'>
  readonly serviceEvents: Pick<ServiceEvents, 'emitCustom' | 'publishOn'>
}

/**
 * Gives a registered service's handle its hook-running methods (arguments read by method-layout),
 * its hooks, events and publishers, all served by the app's core. The methods that run through the
 * hooks: every standard method the service has, exposed or not, and the custom methods it exposes.
 */
export function decorateHandle(entry: ServiceEntry, core: HandleCore): void {
  const handle = entry.handle as unknown as Record<string, unknown>
  const service = entry.service as Record<string, unknown>
  const standard = STANDARD_METHODS.filter((method) => typeof service[method] === 'function')
  for (const method of new Set([...standard, ...entry.methods])) {
    handle[method] = async (...args: unknown[]) => {
      const { id, data, last } = fromArguments<Params>(method, args)
      return (await core.run(entry, { path: entry.path, method, id, data, params: last ?? {} })).result
    }
  }
  // Arrow functions: the members keep working when taken off the handle (`const { on } = service`).
  const members: Record<keyof HandleMembers, unknown> = {
    path: entry.path,
    methods: entry.methods,
    hooks: (map: HookMap | AroundHook[]) => {
      core.pipeline.addServiceHooks(entry, map)
      return handle
    },
    on: (event: string, listener: EventListener) => {
      entry.emitter.on(event, listener)
      return handle
    },
    once: (event: string, listener: EventListener) => {
      entry.emitter.once(event, listener)
      return handle
    },
    off: (event: string, listener: EventListener) => {
      entry.emitter.off(event, listener)
      return handle
    },
    emit: (event: string, data: unknown, context?: HookContext) => {
      core.serviceEvents.emitCustom(entry, event, data, context)
      return true
    },
    publish: (eventOrPublisher: string | Publisher, publisher?: Publisher) => {
      core.serviceEvents.publishOn(entry, eventOrPublisher, publisher)
      return handle
    }
  }
  Object.assign(handle, members)
}
