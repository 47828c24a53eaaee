import { beforeEach, describe, expect, it } from '@jest/globals'
import { AdapterService, type AdapterParams } from '../../src/application/adapter-service.js'
import { App } from '../../src/application/app.js'
import type { HookContext } from '../../src/application/hook-context.js'
import { validateSchemas } from '../../src/application/schema/validate-schemas.js'
import { BadRequest, MethodNotAllowed, NotFound } from '../../src/domain/errors/errors.js'
import type { StoreQuery } from '../../src/domain/query/ast.js'
import type { Data } from '../../src/domain/service/service.js'
import { InMemoryStore } from '../../src/infrastructure/memory/in-memory-store.js'
import { AjvSchemaValidator } from '../../src/infrastructure/schema/ajv-schema-validator.js'

/** An InMemoryStore that records which store methods the service called. */
class SpyStore extends InMemoryStore {
  calls: string[] = []
  override async page(query: StoreQuery) {
    this.calls.push('page')
    return super.page(query)
  }
  override async count(filter: StoreQuery['filter']) {
    this.calls.push('count')
    return super.count(filter)
  }
  override async find(query: StoreQuery) {
    this.calls.push('find')
    return super.find(query)
  }
}

async function seeded(options: ConstructorParameters<typeof AdapterService>[1] = {}, count = 30) {
  const store = new SpyStore()
  await store.create(
    Array.from({ length: count }, (_, n) => ({ n, text: `message ${n}`, even: n % 2 === 0 })),
    {}
  )
  store.calls = []
  return { store, service: new AdapterService<Data>(store, options) }
}

describe('AdapterService pagination', () => {
  it('returns a page object with total, limit, skip and data in that order', async () => {
    const { service } = await seeded({ paginate: { default: 10, max: 50 } })
    const page = await service.find({ query: { $sort: { n: 1 } } })
    expect(Object.keys(page)).toEqual(['total', 'limit', 'skip', 'data'])
    expect(page).toMatchObject({ total: 30, limit: 10, skip: 0 })
    expect((page as { data: Data[] }).data.map((r) => r.n)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
  })

  it('clamps $limit to paginate.max', async () => {
    const { service } = await seeded({ paginate: { default: 10, max: 15 } })
    const page = (await service.find({ query: { $limit: '100' } })) as { limit: number; data: Data[] }
    expect(page.limit).toBe(15)
    expect(page.data).toHaveLength(15)
  })

  it('returns total only, by a count and nothing else, when $limit is 0', async () => {
    const { service, store } = await seeded({ paginate: { default: 10, max: 50 } })
    await expect(service.find({ query: { $limit: 0, even: true } })).resolves.toEqual({
      total: 15,
      limit: 0,
      skip: 0,
      data: []
    })
    expect(store.calls).toEqual(['count'])
  })

  it('returns a plain array when params.paginate is false', async () => {
    const { service } = await seeded({ paginate: { default: 10, max: 50 } })
    const all = await service.find({ paginate: false })
    expect(Array.isArray(all)).toBe(true)
    expect(all).toHaveLength(30)
  })

  it('lets params.paginate override the service option', async () => {
    const { service } = await seeded()
    const page = (await service.find({ paginate: { default: 3 } })) as { data: Data[]; total: number }
    expect(page.total).toBe(30)
    expect(page.data).toHaveLength(3)
  })

  it('returns an empty array for $limit 0 without pagination', async () => {
    const { service } = await seeded()
    await expect(service.find({ query: { $limit: 0 } })).resolves.toEqual([])
  })

  it('counts total before $skip and $limit', async () => {
    const { service } = await seeded({ paginate: { default: 10 } })
    const page = (await service.find({ query: { even: true, $skip: 10, $limit: 3, $sort: { n: -1 } } })) as {
      total: number
      data: Data[]
    }
    expect(page.total).toBe(15)
    expect(page.data.map((r) => r.n)).toEqual([8, 6, 4])
  })
})

describe('AdapterService methods', () => {
  let service: AdapterService<Data>
  beforeEach(async () => {
    service = (await seeded({ multi: false }, 5)).service
  })

  it('answers NotFound when the record exists but does not match params.query', async () => {
    await expect(service.get(1, { query: { even: true } })).rejects.toThrow(new NotFound("No record found for id '1'"))
    await expect(service.patch(1, { x: 1 }, { query: { even: true } })).rejects.toBeInstanceOf(NotFound)
    await expect(service.update(1, { x: 1 }, { query: { even: true } })).rejects.toBeInstanceOf(NotFound)
    await expect(service.remove(1, { query: { even: true } })).rejects.toBeInstanceOf(NotFound)
    await expect(service.get(2, { query: { even: true } })).resolves.toMatchObject({ n: 2 })
  })

  it('refuses multiple entries with the Feathers messages when multi is off', async () => {
    await expect(service.create([{ a: 1 }])).rejects.toThrow(new MethodNotAllowed('Can not create multiple entries'))
    await expect(service.create([])).rejects.toBeInstanceOf(MethodNotAllowed)
    await expect(service.patch(null, { a: 1 })).rejects.toThrow(new MethodNotAllowed('Can not patch multiple entries'))
    await expect(service.remove(null)).rejects.toThrow(new MethodNotAllowed('Can not remove multiple entries'))
  })

  it('always refuses update with id null or array data', async () => {
    const multi = (await seeded({ multi: true }, 2)).service
    const message = "You can not replace multiple instances. Did you mean 'patch'?"
    await expect(multi.update(null, { a: 1 })).rejects.toThrow(new BadRequest(message))
    await expect(multi.update(1, [{ a: 1 }] as never)).rejects.toThrow(message)
  })

  it('allows exactly the methods listed in multi', async () => {
    const { service: partial } = await seeded({ multi: ['patch'] }, 4)
    await expect(partial.patch(null, { seen: true }, { query: { even: true } })).resolves.toHaveLength(2)
    await expect(partial.remove(null)).rejects.toBeInstanceOf(MethodNotAllowed)
  })

  it('does not let $limit restrict multi patch and remove', async () => {
    const { service: multi } = await seeded({ multi: true }, 6)
    await expect(multi.patch(null, { seen: true }, { query: { $limit: 1 } })).resolves.toHaveLength(6)
    await expect(multi.remove(null, { query: { $limit: 2, even: true } })).resolves.toHaveLength(3)
  })

  it('applies $select to every method and always keeps the id', async () => {
    const { service: multi } = await seeded({ multi: true }, 3)
    const params = { query: { $select: ['n'] } }
    await expect(multi.get(0, params)).resolves.toEqual({ id: 0, n: 0 })
    await expect(multi.create({ n: 9, text: 'x' }, params)).resolves.toEqual({ id: 3, n: 9 })
    await expect(multi.create([{ n: 10, text: 'y' }], params)).resolves.toEqual([{ id: 4, n: 10 }])
    await expect(multi.patch(0, { text: 'z' }, params)).resolves.toEqual({ id: 0, n: 0 })
    await expect(multi.update(1, { n: 11, text: 'w' }, params)).resolves.toEqual({ id: 1, n: 11 })
    await expect(multi.remove(2, params)).resolves.toEqual({ id: 2, n: 2 })
    await expect(multi.find({ query: { $select: 'text', $sort: { id: 1 }, $limit: 1 } })).resolves.toEqual([
      { id: 0, text: 'z' }
    ])
  })

  it('keeps the stored id on update and patch', async () => {
    await expect(service.update(0, { id: 999, y: 2 })).resolves.toEqual({ id: 0, y: 2 })
    await expect(service.patch(1, { id: 999, y: 3 })).resolves.toMatchObject({ id: 1, y: 3, n: 1 })
  })

  it('creates an empty array as [] when multi allows it', async () => {
    const { service: multi } = await seeded({ multi: true }, 0)
    await expect(multi.create([])).resolves.toEqual([])
  })

  it('reports unknown operators as BadRequest naming them', async () => {
    await expect(service.find({ query: { n: { $regex: 'x' } } })).rejects.toThrow('Invalid query parameter $regex')
    await expect(service.find({ query: { $foo: 1 } })).rejects.toThrow('Invalid filter value $foo')
  })

  it('accepts only the operators listed when a whitelist is given', async () => {
    const restricted = new AdapterService(new InMemoryStore(), { operators: [] })
    await expect(restricted.find({ query: { text: { $search: 'a' } } })).rejects.toThrow(
      'Invalid query parameter $search'
    )
  })
})

describe('AdapterService per-call options (params.adapter)', () => {
  it('pages with params.adapter.paginate, over params.paginate and the service option', async () => {
    const { service } = await seeded({ paginate: { default: 10 } })
    const page = await service.find({ paginate: { default: 5 }, adapter: { paginate: { default: 3 } } })
    expect(page).toMatchObject({ total: 30, limit: 3, skip: 0 })
    await expect(service.find({ adapter: { paginate: false } })).resolves.toHaveLength(30)
  })

  it('allows several records with params.adapter.multi for that call only', async () => {
    const { service } = await seeded({ multi: false }, 2)
    await expect(service.create([{ n: 2 }, { n: 3 }], { adapter: { multi: ['create'] } })).resolves.toHaveLength(2)
    await expect(service.patch(null, { a: 1 }, { adapter: { multi: ['create'] } })).rejects.toThrow(
      'Can not patch multiple entries'
    )
    await expect(service.remove(null, { adapter: { multi: true } })).resolves.toHaveLength(4)
    await expect(service.create([{ n: 4 }])).rejects.toBeInstanceOf(MethodNotAllowed)
  })

  it('narrows the operators with params.adapter.operators', async () => {
    const { service } = await seeded({}, 2)
    await expect(service.find({ query: { text: { $search: '1' } } })).resolves.toHaveLength(1)
    await expect(service.find({ query: { text: { $search: '1' } }, adapter: { operators: [] } })).rejects.toThrow(
      'Invalid query parameter $search'
    )
  })

  it('lets validateSchemas take an array when params.adapter allows several creates', async () => {
    const app = new App({ validator: new AjvSchemaValidator() })
    const schema = { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } as const
    app.use('items', new AdapterService(new InMemoryStore()), { schemas: { data: schema } })
    app.service('items').hooks({ before: { create: [validateSchemas()] } })
    const items = app.service('items')
    await expect(items.create([{ n: 1 }])).rejects.toThrow(new MethodNotAllowed('Can not create multiple entries'))
    await expect(items.create([{ n: 1 }, { n: 2 }], { adapter: { multi: ['create'] } })).resolves.toHaveLength(2)
    await expect(items.create([{ n: 'x' }], { adapter: { multi: true } })).rejects.toBeInstanceOf(BadRequest)
  })

  it('leaves limit out of a page that nothing bounds, as Feathers does with paginate: {}', async () => {
    const { service } = await seeded({ paginate: {} }, 3)
    const page = await service.find()
    expect(Object.keys(page)).toEqual(['total', 'skip', 'data'])
    expect(JSON.stringify(page)).not.toContain('limit')
    await expect(service.find({ query: { $limit: 2 } })).resolves.toMatchObject({ total: 3, limit: 2 })
  })
})

describe('AdapterService hook-less methods', () => {
  /** An app whose `people` service has a before hook on every method that counts the calls it sees. */
  function hookedApp(options: ConstructorParameters<typeof AdapterService>[1] = {}) {
    const seen: string[] = []
    const app = new App().use('people', new AdapterService(new InMemoryStore(), options))
    const people = app.service<AdapterService>('people')
    people.hooks({
      before: {
        all: [
          (context: HookContext) => {
            seen.push(context.method)
          }
        ]
      }
    })
    return { people, seen }
  }

  it('run the same work as the public methods, without the hooks', async () => {
    const { people, seen } = hookedApp()
    const ada = (await people._create({ name: 'Ada' })) as Data
    await expect(people._get(ada.id as number)).resolves.toEqual({ id: 0, name: 'Ada' })
    await expect(people._find({ query: { name: 'Ada' } })).resolves.toEqual([{ id: 0, name: 'Ada' }])
    await expect(people._update(0, { name: 'Ada L.' })).resolves.toEqual({ id: 0, name: 'Ada L.' })
    await expect(people._patch(0, { born: 1815 })).resolves.toEqual({ id: 0, name: 'Ada L.', born: 1815 })
    await expect(people._remove(0)).resolves.toEqual({ id: 0, name: 'Ada L.', born: 1815 })
    await expect(people._get(0)).rejects.toBeInstanceOf(NotFound)
    expect(seen).toEqual([])
    await people.create({ name: 'Grace' })
    expect(seen).toEqual(['create'])
  })

  it('are not methods the transports can reach', () => {
    expect(hookedApp().people.methods).toEqual(['find', 'get', 'create', 'update', 'patch', 'remove'])
  })

  it('_create takes arrays without multi, as in Feathers; _patch and _remove keep the check', async () => {
    const { people } = hookedApp()
    await expect(people._create([{ n: 1 }, { n: 2 }])).resolves.toHaveLength(2)
    await expect(people._patch(null, { a: 1 })).rejects.toBeInstanceOf(MethodNotAllowed)
    await expect(people._remove(null)).rejects.toBeInstanceOf(MethodNotAllowed)
  })

  it('back the public methods, so a subclass overrides the work once', async () => {
    class Stamped extends AdapterService {
      override _create(data: Partial<Data> | Partial<Data>[], params?: AdapterParams) {
        return super._create(Array.isArray(data) ? data : { ...data, stamped: true }, params)
      }
    }
    const app = new App().use('stamped', new Stamped(new InMemoryStore()))
    await expect(app.service('stamped').create({ a: 1 })).resolves.toEqual({ id: 0, a: 1, stamped: true })
  })

  it('reject rather than throw when the query is refused or the store throws before it returns a promise', async () => {
    const { people } = hookedApp()
    const badQuery = { query: { $limit: 'many' } }
    // Rejections, not synchronous throws: a caller chaining `.then`/`.catch` (as the hooks do) sees the error.
    await expect(people._create({ n: 1 }, badQuery)).rejects.toBeInstanceOf(BadRequest)
    await expect(people._patch(0, { n: 1 }, badQuery)).rejects.toBeInstanceOf(BadRequest)
    const store = new InMemoryStore()
    store.create = () => {
      throw new Error('create broke')
    }
    store.patch = () => {
      throw new Error('patch broke')
    }
    const broken = new AdapterService(store)
    await expect(broken._create({ n: 1 })).rejects.toThrow('create broke')
    await expect(broken._patch(0, { n: 1 })).rejects.toThrow('patch broke')
    await expect(broken._patch(404, { n: 1 })).rejects.toThrow('patch broke')
    await expect(new AdapterService(new InMemoryStore())._patch(404, { n: 1 })).rejects.toBeInstanceOf(NotFound)
  })
})
