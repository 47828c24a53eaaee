import { describe, expect, it } from '@jest/globals'
import { App } from '../../src/application/app.js'
import type { AroundHook, Hook, HookContext } from '../../src/application/hook-context.js'
import { HookPipeline } from '../../src/application/hook-pipeline.js'
import { PROTECTED_FIELDS } from '../../src/application/protected-fields.js'
import type { ServiceOptions } from '../../src/application/service-entry.js'
import { ServiceEvents } from '../../src/application/service-events.js'
import { decorateHandle } from '../../src/application/service-handle.js'
import { ServiceRegistry } from '../../src/application/service-registry.js'
import { BadRequest, Conflict, MethodNotAllowed, NotFound } from '../../src/domain/errors/errors.js'
import type { Params, ServiceCall } from '../../src/domain/service/service.js'

/** A service that records each call (method, arguments, `this`) in `log`, and fails `get` with NotFound. */
function recordingService(log: unknown[]) {
  return {
    async find(...args: unknown[]) {
      log.push(['find', ...args])
      return [{ id: 1 }]
    },
    async get(id: unknown) {
      log.push(['get', id])
      throw new NotFound(`No record found for id '${String(id)}'`)
    },
    async create(data: unknown) {
      log.push(['create', data])
      return data
    },
    async update(id: unknown, data: unknown) {
      log.push(['update', id, data])
      return data
    },
    async patch(this: unknown, ...args: unknown[]) {
      log.push(['patch', ...args, this])
      return { id: args[0] }
    },
    async remove(id: unknown) {
      log.push(['remove', id])
      return { id }
    },
    async shout(data: unknown) {
      log.push(['shout', data])
      return { shouted: data }
    }
  }
}

/** One service in a registry, run by a HookPipeline of its own. */
function setup(options: ServiceOptions = {}) {
  const log: unknown[] = []
  const app = new App()
  const registry = new ServiceRegistry()
  const pipeline = new HookPipeline(app, () => registry.values())
  const core = { run: pipeline.run.bind(pipeline), pipeline, serviceEvents: new ServiceEvents() }
  const register = (path: string) => {
    const entry = registry.register(path, recordingService(log), options)
    decorateHandle(entry, core)
    return entry
  }
  const entry = register('things')
  const run = (call: Omit<ServiceCall, 'path' | 'params'> & { params?: Params }) =>
    pipeline.run(entry, { path: entry.path, params: {}, ...call })
  return { app, log, registry, pipeline, entry, register, run }
}

const note =
  (order: string[], name: string): Hook =>
  (context) => {
    order.push(`${name} (${context.type})`)
  }
const wrap =
  (order: string[], name: string): AroundHook =>
  async (context, next) => {
    order.push(`${name} in (${context.type})`)
    await next()
    order.push(`${name} out`)
  }

describe('HookPipeline: order', () => {
  it('runs around → before → method → after, app hooks wrapping service hooks, each hook once', async () => {
    const { pipeline, entry, run, log } = setup()
    const order: string[] = []
    pipeline.addAppHooks({
      around: { all: [wrap(order, 'app around')] },
      before: { all: [note(order, 'app before')] },
      after: { all: [note(order, 'app after')] }
    })
    pipeline.addServiceHooks(entry, {
      around: { create: [wrap(order, 'service around')] },
      before: { create: [note(order, 'service before')] },
      after: {
        all: [
          note(order, 'service after'),
          () => {
            order.push(`method ran: ${log.length}`)
          }
        ]
      }
    })
    await run({ method: 'create', data: { a: 1 } })
    expect(order).toEqual([
      'app around in (around)',
      'service around in (around)',
      'app before (before)',
      'service before (before)',
      'service after (after)',
      'method ran: 1',
      'app after (after)',
      'service around out',
      'app around out'
    ])
  })

  it('calls the method with its arguments laid out by method-layout and the handle as `this`', async () => {
    const { run, log, entry } = setup()
    await run({ method: 'patch', id: 7, data: { a: 1 }, params: { provider: 'rest' } })
    await run({ method: 'find', params: { query: { a: 1 } } })
    await run({ method: 'shout', data: 'hey' })
    expect(log).toEqual([
      ['patch', 7, { a: 1 }, { provider: 'rest' }, entry.handle],
      ['find', { query: { a: 1 } }],
      ['shout', 'hey']
    ])
  })

  it('answers a context with the call, the app, the handle and the event of the method', async () => {
    const { app, run, entry } = setup()
    const created = await run({ method: 'create', data: { a: 1 }, params: { provider: 'rest' } })
    expect(created).toMatchObject({
      app,
      service: entry.handle,
      path: 'things',
      method: 'create',
      data: { a: 1 },
      params: { provider: 'rest' },
      result: { a: 1 },
      event: 'created',
      http: {}
    })
    expect((await run({ method: 'find' })).event).toBeNull()
    expect((await run({ method: 'shout', data: {} })).event).toBeNull()
    expect((await run({ method: 'remove', id: 3 })).event).toBe('removed')
  })

  it('skips the method when a before hook sets the result; after hooks still run', async () => {
    const { run, entry, pipeline, log } = setup()
    pipeline.addServiceHooks(entry, {
      before: {
        get: [
          (context) => {
            context.result = { id: 'cached' }
          }
        ]
      },
      after: {
        get: [
          (context) => {
            context.result = { ...(context.result as object), after: true }
          }
        ]
      }
    })
    expect((await run({ method: 'get', id: 42 })).result).toEqual({ id: 'cached', after: true })
    expect(log).toEqual([])
  })

  it('uses hooks added after earlier calls, at the service and at the app level', async () => {
    const { run, entry, pipeline, register } = setup()
    const other = register('others')
    const order: string[] = []
    await run({ method: 'find' })
    pipeline.addServiceHooks(entry, { before: { find: [note(order, 'service')] } })
    await run({ method: 'find' })
    pipeline.addAppHooks({ before: { all: [note(order, 'app')] } })
    await run({ method: 'find' })
    await pipeline.run(other, { path: other.path, method: 'find', params: {} })
    expect(order).toEqual(['service (before)', 'app (before)', 'service (before)', 'app (before)'])
    expect(pipeline.chainFor(entry, 'find')).toBe(pipeline.chainFor(entry, 'find'))
  })
})

describe('HookPipeline: errors', () => {
  it('runs the error hooks, service then app, for a failing method and rethrows when none recovers', async () => {
    const { run, entry, pipeline } = setup()
    const seen: unknown[] = []
    pipeline.addAppHooks({
      error: {
        all: [
          (context) => {
            seen.push(['app', context.type, (context.error as Error).name])
          }
        ]
      }
    })
    pipeline.addServiceHooks(entry, {
      error: {
        get: [
          (context) => {
            seen.push(['service', context.type, (context.error as Error).name])
          }
        ]
      }
    })
    await expect(run({ method: 'get', id: 1 })).rejects.toBeInstanceOf(NotFound)
    expect(seen).toEqual([
      ['service', 'error', 'NotFound'],
      ['app', 'error', 'NotFound']
    ])
  })

  it('runs them for errors of before and after hooks too', async () => {
    const { run, entry, pipeline, log } = setup()
    const seen: string[] = []
    pipeline.addServiceHooks(entry, {
      before: {
        create: [
          () => {
            throw new BadRequest('refused before')
          }
        ]
      },
      after: {
        find: [
          () => {
            throw new Conflict('refused after')
          }
        ]
      },
      error: {
        all: [
          (context) => {
            seen.push((context.error as Error).message)
          }
        ]
      }
    })
    await expect(run({ method: 'create', data: {} })).rejects.toThrow('refused before')
    await expect(run({ method: 'find' })).rejects.toThrow('refused after')
    expect(seen).toEqual(['refused before', 'refused after'])
    expect(log).toEqual([['find', {}]])
  })

  it('recovers when an error hook sets a result: the call answers it and the context has no error', async () => {
    const { run, entry, pipeline } = setup()
    pipeline.addServiceHooks(entry, {
      error: {
        get: [
          (context) => {
            context.result = { id: context.id, fallback: true }
          }
        ]
      }
    })
    const context = await run({ method: 'get', id: 5 })
    expect(context.result).toEqual({ id: 5, fallback: true })
    expect(context.error).toBeUndefined()
  })

  it('recovers when an error hook clears the error', async () => {
    const { run, entry, pipeline } = setup()
    pipeline.addServiceHooks(entry, {
      error: {
        get: [
          (context) => {
            context.error = undefined
          }
        ]
      }
    })
    const context = await run({ method: 'get', id: 5 })
    expect([context.result, context.error]).toEqual([undefined, undefined])
  })

  it('rejects with the error an error hook assigned or threw; later error hooks see the replacement', async () => {
    const { run, entry, pipeline } = setup()
    const seen: string[] = []
    pipeline.addServiceHooks(entry, {
      error: {
        get: [
          (context) => {
            context.error = new BadRequest('assigned')
          },
          (context) => {
            seen.push((context.error as Error).message)
          }
        ],
        remove: [
          () => {
            throw new Conflict('thrown')
          },
          (context) => {
            seen.push((context.error as Error).message)
          }
        ]
      }
    })
    pipeline.addServiceHooks(entry, {
      before: {
        remove: [
          () => {
            throw new Error('original')
          }
        ]
      }
    })
    await expect(run({ method: 'get', id: 1 })).rejects.toMatchObject({ name: 'BadRequest', message: 'assigned' })
    await expect(run({ method: 'remove', id: 1 })).rejects.toBeInstanceOf(Conflict)
    expect(seen).toEqual(['assigned', 'thrown'])
  })
})

describe('HookPipeline: refusals before any hook runs', () => {
  function guarded(options: ServiceOptions = {}) {
    const harness = setup(options)
    const ran: string[] = []
    harness.pipeline.addAppHooks({
      around: {
        all: [
          async (_context, next) => {
            ran.push('around')
            await next()
          }
        ]
      },
      before: {
        all: [
          () => {
            ran.push('before')
          }
        ]
      }
    })
    return { ...harness, ran }
  }

  it('answers MethodNotAllowed to an external caller of a method that is not exposed; internal calls may use it', async () => {
    const { run, ran, log } = guarded({ methods: ['find', 'shout'] })
    const refused = run({ method: 'remove', id: 1, params: { provider: 'socketio' } })
    await expect(refused).rejects.toBeInstanceOf(MethodNotAllowed)
    await expect(refused).rejects.toThrow('Method `remove` is not supported by this endpoint.')
    expect(ran).toEqual([])
    await expect(run({ method: 'remove', id: 1 })).resolves.toMatchObject({ result: { id: 1 } })
    await expect(run({ method: 'shout', data: 'x', params: { provider: 'rest' } })).resolves.toMatchObject({
      result: { shouted: 'x' }
    })
    expect(log).toEqual([
      ['remove', 1],
      ['shout', 'x']
    ])
  })

  it.each([
    ['create', 'a string', "First parameter for 'create' must be an object", 'text'],
    ['create', 'null', "First parameter for 'create' must be an object", null],
    ['create', 'nothing', "First parameter for 'create' must be an object", undefined],
    ['update', 'null', 'No data provided', null],
    ['update', 'an array', 'No data provided', [{ a: 1 }]],
    ['patch', 'nothing', 'No data provided', undefined],
    ['patch', 'a number', 'No data provided', 5]
  ])('refuses %s with %s as data: 400 "%s"', async (method, _what, message, data) => {
    const { run, ran, log } = guarded()
    const refused = run({ method, id: 1, data })
    await expect(refused).rejects.toBeInstanceOf(BadRequest)
    await expect(refused).rejects.toThrow(message)
    expect([ran, log]).toEqual([[], []])
  })

  it('lets create take an array, and custom methods any data', async () => {
    const { run } = guarded()
    await expect(run({ method: 'create', data: [{ a: 1 }] })).resolves.toMatchObject({ result: [{ a: 1 }] })
    await expect(run({ method: 'shout', data: 'text' })).resolves.toMatchObject({ result: { shouted: 'text' } })
  })

  const deep = (depth: number): unknown => JSON.parse('['.repeat(depth) + ']'.repeat(depth))

  it('refuses data nested more than 64 levels deep, for every method', async () => {
    const { run, ran, log } = guarded()
    for (const method of ['create', 'patch', 'shout']) {
      await expect(run({ method, id: 1, data: { text: deep(20_000) } })).rejects.toMatchObject({
        code: 400,
        message: 'Data may be nested at most 64 levels deep'
      })
    }
    expect([ran, log]).toEqual([[], []])
    await expect(run({ method: 'create', data: { text: deep(63) } })).resolves.toBeDefined()
  })

  it('refuses a query nested more than 64 levels deep', async () => {
    const { run, ran } = guarded()
    await expect(run({ method: 'find', params: { query: { text: deep(65) } } })).rejects.toMatchObject({
      code: 400,
      message: 'The query may be nested at most 64 levels deep'
    })
    expect(ran).toEqual([])
    await expect(run({ method: 'find', params: { query: { text: deep(63) } } })).resolves.toBeDefined()
  })
})

describe('HookPipeline: protected fields', () => {
  const protecting = (...fields: string[]): Hook => Object.assign(() => undefined, { [PROTECTED_FIELDS]: fields })

  it('collects the fields protect-style hooks hide, at the app level and per service', () => {
    const { pipeline, entry, register } = setup()
    const other = register('others')
    expect([...pipeline.hiddenFields(entry)]).toEqual([])
    pipeline.addAppHooks({ after: { all: [protecting('password')] } })
    pipeline.addServiceHooks(entry, { after: { find: [() => undefined, protecting('secret', 'pin')] } })
    pipeline.addServiceHooks(other, [
      Object.assign(async (_context: HookContext, next: () => Promise<void>) => next(), {
        [PROTECTED_FIELDS]: ['token']
      })
    ])
    expect([...pipeline.hiddenFields(entry)]).toEqual(['password', 'secret', 'pin'])
    expect([...pipeline.hiddenFields(other)]).toEqual(['password', 'token'])
    expect([...pipeline.appProtected]).toEqual(['password'])
  })
})
