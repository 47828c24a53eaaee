import { describe, expect, it } from '@jest/globals'
import { App } from '../../../src/application/app.js'
import { AdapterService } from '../../../src/application/adapter-service.js'
import { RulesError, useRules, type RulesDefinition } from '../../../src/application/rules/index.js'
import { NotFound } from '../../../src/domain/errors/errors.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'
import { as, noteSchemas, rulesApp, type Note } from './rules-harness.js'

/*
 * Rules on calls and events (src/application/rules): queries narrowed, records outside the rules answered like
 * missing ones, data checked field by field, results and events projected, recipients grouped by rule set, and
 * bad rules refused at setup with one line naming them.
 */

const ann = { id: 1, role: 'user' }
const bob = { id: 2, role: 'user' }
const eve = { id: 3, role: 'user' }
const admin = { id: 9, role: 'admin' }

/** Notes: public ones (no `to`) and direct ones, the author's to change; `secret` only the owner reads. */
const notesRules: RulesDefinition = (user, { can, cannot }) => {
  if (!user) return
  can('read', 'notes', { to: null })
  can('read', 'notes', { ownerId: user.id })
  can('read', 'notes', { to: user.id })
  cannot('read', 'notes', ['secret'])
  can('read', 'notes', ['secret'], { ownerId: user.id })
  can('create', 'notes', ['text', 'to', 'ownerId'], { ownerId: user.id })
  can(['update', 'patch'], 'notes', ['text', 'to'], { ownerId: user.id })
  can('remove', 'notes', { ownerId: user.id })
  if (user.role === 'admin') can('remove', 'notes')
}

async function seeded() {
  const setup = await rulesApp({ notes: notesRules })
  const { notes } = setup
  const pub = (await notes.create({ text: 'public', ownerId: 1, secret: 's1' })) as Note
  const dm = (await notes.create({ text: 'for bob', ownerId: 1, to: 2, secret: 's2' })) as Note
  const bobs = (await notes.create({ text: 'bobs', ownerId: 2, secret: 's3' })) as Note
  return { ...setup, pub, dm, bobs }
}

const ids = (records: unknown) => (records as Note[]).map((record) => record.id).sort()

describe('calls', () => {
  it('find and get see only what the rules let the caller read, without the fields they hide', async () => {
    const { notes, pub, dm, bobs } = await seeded()
    const page = (await notes.find(as(eve))) as { data: Note[]; total: number }
    expect(page.total).toBe(2)
    expect(ids(page.data)).toEqual([pub.id, bobs.id])
    expect(page.data.every((note) => !('secret' in note))).toBe(true)
    expect(ids(((await notes.find(as(bob))) as { data: Note[] }).data)).toEqual([pub.id, dm.id, bobs.id])
    expect(await notes.get(dm.id as number, as(ann))).toMatchObject({ secret: 's2' })
    expect(await notes.get(dm.id as number, as(bob))).not.toHaveProperty('secret')
    // The user's own query is ANDed with the rules'.
    const mine = (await notes.find(as(eve, { text: 'for bob' }))) as { data: Note[] }
    expect(mine.data).toEqual([])
  })

  it('a record outside the rules answers exactly as a missing id does (404, same message)', async () => {
    const { notes, dm } = await seeded()
    const missing = await notes.get(999, as(eve)).catch((error: unknown) => error)
    const hidden = await notes.get(dm.id as number, as(eve)).catch((error: unknown) => error)
    expect(missing).toBeInstanceOf(NotFound)
    expect(hidden).toBeInstanceOf(NotFound)
    expect((hidden as Error).message).toBe(`No record found for id '${dm.id}'`)
    for (const call of [
      () => notes.patch(dm.id as number, { text: 'x' }, as(eve)),
      () => notes.update(dm.id as number, { text: 'x' }, as(eve)),
      () => notes.remove(dm.id as number, as(eve))
    ]) {
      await expect(call()).rejects.toMatchObject({ code: 404, message: `No record found for id '${dm.id}'` })
    }
    expect(await notes.get(dm.id as number)).toMatchObject({ text: 'for bob' })
  })

  it('a readable record the caller may not change is a 403 that names no value', async () => {
    const { notes, pub } = await seeded()
    const error = (await notes.patch(pub.id as number, { text: 'mine now' }, as(bob)).catch((e: unknown) => e)) as {
      code: number
      message: string
    }
    expect(error.code).toBe(403)
    expect(error.message).not.toContain('public')
    await expect(notes.remove(pub.id as number, as(bob))).rejects.toMatchObject({ code: 403 })
    expect(await notes.remove(pub.id as number, as(admin))).toMatchObject({ id: pub.id })
  })

  it('data is checked: a field the caller may not set is a 403 naming the field, not its value', async () => {
    const { notes, pub } = await seeded()
    const error = (await notes
      .patch(pub.id as number, { text: 'ok', secret: 'hunter2' }, as(ann))
      .catch((e: unknown) => e)) as { code: number; message: string }
    expect([error.code, error.message]).toEqual([403, "You may not set 'secret' in 'notes'"])
    await expect(notes.create({ text: 'as bob', ownerId: 2 }, as(ann))).rejects.toMatchObject({ code: 403 })
    expect(await notes.create({ text: 'mine', ownerId: 1 }, as(ann))).toMatchObject({ text: 'mine' })
    expect(await notes.patch(pub.id as number, { text: 'edited' }, as(ann))).toMatchObject({ text: 'edited' })
  })

  it('multi-record patch and remove touch only the records the rules allow', async () => {
    const { notes, pub, dm, bobs } = await seeded()
    const patched = await notes.patch(null, { text: 'all mine' }, as(ann))
    expect(ids(patched)).toEqual([pub.id, dm.id])
    expect(await notes.get(bobs.id as number)).toMatchObject({ text: 'bobs' })
    const removed = await notes.remove(null, as(bob))
    expect(ids(removed)).toEqual([bobs.id])
    await expect(notes.patch(null, { secret: 'x' }, as(ann))).rejects.toMatchObject({ code: 403 })
  })

  it('a query compares a field only in records where the caller reads it, and sorts only by fields read everywhere', async () => {
    const { notes, pub, bobs } = await seeded()
    expect(await notes.find(as(eve, { secret: { $gt: 'a' } }))).toMatchObject({ total: 0 })
    expect(ids(((await notes.find(as(bob, { secret: { $gt: 'a' } }))) as { data: Note[] }).data)).toEqual([bobs.id])
    // Conservative: the whole query keeps to records where every field it compares is readable.
    const either = (await notes.find(as(ann, { $or: [{ text: 'public' }, { secret: 's3' }] }))) as { data: Note[] }
    expect(ids(either.data)).toEqual([pub.id])
    expect(await notes.find(as(eve, { $or: [{ text: 'public' }, { secret: 's3' }] }))).toMatchObject({ total: 0 })
    await expect(notes.find(as(eve, { $sort: { secret: 1 } }))).rejects.toMatchObject({
      code: 400,
      message: "Sorting by 'secret' is not allowed"
    })
    expect(await notes.find(as(eve, { $select: ['secret', 'text'] }))).toMatchObject({ total: 2 })
  })

  it('internal calls are trusted: they see and change everything', async () => {
    const { notes } = await seeded()
    expect(((await notes.find({})) as { total: number }).total).toBe(3)
  })
})

describe('events', () => {
  it('reach only the connections whose rules allow the record, projected, one delivery per rule set', async () => {
    const { notes, connect, deliveries, settled } = await seeded()
    await settled()
    deliveries.length = 0
    const anns = [connect(ann), connect({ ...ann })]
    const bobs = connect(bob)
    const eves = connect(eve)
    const anonymous = connect()
    await notes.create({ text: 'psst', ownerId: 1, to: 2, secret: 'dm' })
    await settled()
    expect(deliveries.map((delivery) => delivery.connections.length).sort()).toEqual([1, 2])
    const forAnn = deliveries.find((delivery) => delivery.connections.includes(anns[0]!))!
    expect(forAnn.connections).toEqual(anns)
    expect(forAnn.data).toMatchObject({ secret: 'dm' })
    const forBob = deliveries.find((delivery) => delivery.connections.includes(bobs))!
    expect(forBob.data).not.toHaveProperty('secret')
    expect(deliveries.some((delivery) => delivery.connections.includes(eves))).toBe(false)
    expect(deliveries.some((delivery) => delivery.connections.includes(anonymous))).toBe(false)
  })

  it('each record of a multi-record patch is its own event, checked on its own', async () => {
    const { notes, connect, deliveries, settled } = await seeded()
    await settled()
    deliveries.length = 0
    const eves = connect(eve)
    await notes.patch(null, { text: 'again' }, as(ann))
    await settled()
    const seen = deliveries.filter((delivery) => delivery.connections.includes(eves))
    expect(seen.map((delivery) => (delivery.data as Note).to)).toEqual([undefined])
  })

  it("a changed record's next event is evaluated against its new values; a changed user gets new rules", async () => {
    const { app, notes, connect, deliveries, settled, dm } = await seeded()
    const eves = connect({ ...eve })
    await app.service('notes').patch(dm.id as number, { to: 3 })
    await settled()
    expect(deliveries.filter((delivery) => delivery.connections.includes(eves))).toHaveLength(1)
    deliveries.length = 0
    eves.user = { ...eve, id: 4 }
    await notes.patch(dm.id as number, { text: 'again' })
    await settled()
    expect(deliveries.filter((delivery) => delivery.connections.includes(eves))).toHaveLength(0)
  })
})

describe('rule sets per user', () => {
  it('a copy of a user per call gets the cached set; a changed field, even changed in place, gets new rules', () => {
    const app = new App()
    app.use('notes', new AdapterService(new InMemoryStore<Note>()), { schemas: noteSchemas })
    let built = 0
    const rules = useRules(app, { notes: (user, builder) => (built++, notesRules(user, builder)) })
    const set = rules.for({ ...ann })
    built = 0
    expect(rules.for({ ...ann })).toBe(set)
    expect(built).toBe(0)
    expect(rules.memberOf({ ...ann })).toBe(rules.memberOf({ ...ann }))
    const promoted = { ...ann, role: 'admin' }
    expect(rules.for(promoted)).not.toBe(set)
    expect(rules.for(promoted).allows('remove', 'notes', { ownerId: 2 })).toBe(true)
    expect(set.allows('remove', 'notes', { ownerId: 2 })).toBe(false)
    promoted.role = 'user'
    expect(rules.for(promoted).allows('remove', 'notes', { ownerId: 2 })).toBe(false)
    expect(rules.memberOf({ ...ann, id: 4 }).id).toBe(4)
  })
})

describe('bad rules fail early, with one line naming them', () => {
  const setup = (definitions: Record<string, RulesDefinition>) => {
    const app = new App()
    app.use('notes', new AdapterService(new InMemoryStore<Note>()), { schemas: noteSchemas })
    return () => useRules(app, definitions)
  }
  const cases: [string, RulesDefinition, string][] = [
    ['an unknown service', (_user, { can }) => can('read', 'nots'), "A rule names an unknown service 'nots'"],
    ['an unknown action', (_user, { can }) => can('reed', 'notes'), "A rule names an unknown action 'reed'"],
    ['an unknown field', (_user, { can }) => can('read', 'notes', ['colour']), "names the field 'colour'"],
    ['a condition on an unknown field', (_user, { can }) => can('read', 'notes', { colour: 1 }), "'colour'"],
    ['an unsupported operator', (_user, { can }) => can('read', 'notes', { text: { $regex: 'a' } }), '$regex'],
    ['$elemMatch', (_user, { can }) => can('read', 'notes', { to: { $elemMatch: { a: 1 } } }), '$elemMatch'],
    ['a cannot with a range', (_user, { cannot }) => cannot('read', 'notes', { level: { $lt: 3 } }), '$lt'],
    [
      'a condition on a value the user lacks',
      (user, { can }) => can('read', 'notes', { ownerId: user?.missing as never }),
      "undefined condition on 'ownerId'"
    ]
  ]
  it.each(cases)('%s', (_name, definition, named) => {
    const start = setup({ notes: definition })
    expect(start).toThrow(RulesError)
    expect(start).toThrow(named)
    try {
      start()
    } catch (error) {
      expect((error as Error).message.split('\n')).toHaveLength(1)
    }
  })

  it('a guarded service the app does not have', () => {
    expect(setup({ nope: () => undefined })).toThrow("Rules name an unknown service 'nope'")
  })
})
