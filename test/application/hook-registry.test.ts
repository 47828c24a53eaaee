import { describe, expect, it } from '@jest/globals'
import type { AroundHook, Hook, HookMap } from '../../src/application/hook-context.js'
import { HookRegistry, combineChains, type HookChain } from '../../src/application/hook-registry.js'

/** A hook that is recognisable by name in the chains. */
const hook = (name: string): Hook => Object.defineProperty(() => undefined, 'name', { value: name })
const around = (name: string): AroundHook =>
  Object.defineProperty(async (_context: unknown, next: () => Promise<void>) => next(), 'name', { value: name })
const named = (chain: HookChain) => ({
  around: chain.around.map((h) => h.name),
  before: chain.before.map((h) => h.name),
  after: chain.after.map((h) => h.name),
  error: chain.error.map((h) => h.name)
})

describe('HookRegistry', () => {
  it('gives a method its `all` hooks first, then its own, for every type', () => {
    const registry = new HookRegistry()
    registry.add({
      around: { create: [around('around create')], all: [around('around all')] },
      before: { create: [hook('before create')], all: [hook('before all')] },
      after: { create: [hook('after create')], all: [hook('after all')] },
      error: { create: [hook('error create')], all: [hook('error all')] }
    })
    expect(named(registry.forMethod('create'))).toEqual({
      around: ['around all', 'around create'],
      before: ['before all', 'before create'],
      after: ['after all', 'after create'],
      error: ['error all', 'error create']
    })
    expect(named(registry.forMethod('find'))).toEqual({
      around: ['around all'],
      before: ['before all'],
      after: ['after all'],
      error: ['error all']
    })
  })

  it('keeps `all` hooks first even when added after the method hooks, each group in registration order', () => {
    const registry = new HookRegistry()
    registry.add({ before: { get: [hook('get 1')] } })
    registry.add({ before: { all: [hook('all 1')], get: [hook('get 2')] } })
    registry.add({ before: { all: [hook('all 2')] } })
    expect(named(registry.forMethod('get')).before).toEqual(['all 1', 'all 2', 'get 1', 'get 2'])
  })

  it('takes an array as around hooks for every method', () => {
    const registry = new HookRegistry()
    registry.add([around('first'), around('second')])
    expect(named(registry.forMethod('patch'))).toEqual({
      around: ['first', 'second'],
      before: [],
      after: [],
      error: []
    })
    expect(named(registry.forMethod('custom')).around).toEqual(['first', 'second'])
  })

  it('takes a single hook where a list is expected, and ignores empty entries', () => {
    const registry = new HookRegistry()
    registry.add({ before: { find: hook('single'), get: undefined } } as unknown as HookMap)
    expect(named(registry.forMethod('find')).before).toEqual(['single'])
    expect(named(registry.forMethod('get')).before).toEqual([])
  })

  it('has empty chains when nothing is registered', () => {
    expect(named(new HookRegistry().forMethod('find'))).toEqual({ around: [], before: [], after: [], error: [] })
  })
})

describe('combineChains', () => {
  it('lets app hooks wrap service hooks: app around and before first, app after and error last', () => {
    const chain = (level: string): HookChain => ({
      around: [around(`${level} around`)],
      before: [hook(`${level} before`)],
      after: [hook(`${level} after`)],
      error: [hook(`${level} error`)]
    })
    expect(named(combineChains(chain('app'), chain('service')))).toEqual({
      around: ['app around', 'service around'],
      before: ['app before', 'service before'],
      after: ['service after', 'app after'],
      error: ['service error', 'app error']
    })
  })
})
