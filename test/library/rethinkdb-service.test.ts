import { describe, expect, it } from '@jest/globals'
import { r } from 'rethinkdb-ts'
import { AdapterService } from '../../src/application/adapter-service.js'
import { App } from '../../src/application/app.js'
import { service } from '../../src/library/rethinkdb-service.js'

// Building the service and its queries needs no server; the server-backed behaviour is covered by
// rethinkdb-store.test.ts when a RethinkDB is reachable.
describe('RethinkDB service(options)', () => {
  it('builds an adapter service with the spec options', () => {
    const messages = service({
      Model: r,
      name: 'messages',
      db: 'chat',
      id: '_id',
      paginate: { default: 10, max: 50 },
      events: ['typing']
    })
    expect(messages).toBeInstanceOf(AdapterService)
    expect(messages.id).toBe('_id')
    expect(messages.options.paginate).toEqual({ default: 10, max: 50 })
    expect(messages.events).toEqual(['typing'])
    expect(typeof messages.watch).toBe('function')
  })

  it('has no change stream when watch is false, so the app emits method events', () => {
    expect(service({ Model: r, name: 'messages', watch: false }).watch).toBeUndefined()
  })

  it('createQuery applies the common filter criteria from a Feathers query, without pagination', () => {
    const messages = service({ Model: r, name: 'messages', db: 'chat' })
    const query = messages
      .createQuery({ read: false, $or: [{ room: 'a' }, { room: 'b' }], $limit: 5, $sort: { at: 1 } })
      .toString()
    expect(query).toContain('r.db("chat").table("messages").filter(')
    expect(query).toContain('filter({ read: false })')
    expect(query).toContain('"room"')
    expect(query).not.toContain('limit')
    expect(query).not.toContain('orderBy')
    expect(messages.createQuery({}).toString()).toBe('r.db("chat").table("messages")')
  })

  it('createQuery accepts the adapter operators and rejects unknown ones', () => {
    const messages = service({ Model: r, name: 'messages' })
    expect(messages.createQuery({ text: { $search: '(?i)hello' }, tags: { $contains: 'x' } }).toString()).toContain(
      'match("(?i)hello")'
    )
    expect(() => messages.createQuery({ text: { $regex: 'x' } })).toThrow('Invalid query parameter $regex')
  })

  it('registers on an app like any service', () => {
    const app = new App()
    app.use('messages', service({ Model: r, name: 'messages' }))
    expect(app.service('messages').methods).toEqual(['find', 'get', 'create', 'update', 'patch', 'remove'])
  })
})
