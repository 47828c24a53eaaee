import { afterAll, describe, expect, it } from '@jest/globals'
import { App } from '../../src/application/app.js'
import type { Data, Paginated } from '../../src/domain/service/service.js'
import { useRethinkDbMessages } from '../../examples/rethinkdb-service.js'
import { discoverRethinkDb } from '../support/rethinkdb-server.js'

// Needs a real server (RETHINKDB_URL or Docker); otherwise the run prints the loud SKIPPED line.
const server = await discoverRethinkDb()
const withServer = server ? describe : describe.skip
afterAll(async () => {
  await server?.stop()
})

withServer('the RethinkDB example of docs/reference/stores/rethinkdb.md', () => {
  it('creates the table and finds unread messages only', async () => {
    const app = new App()
    await useRethinkDbMessages(app, server!.r, server!.db)
    await app.setup()
    const messages = app.service('messages')
    await messages.create({ text: 'old', read: true }, {})
    await messages.create({ text: 'new' }, {})
    const page = (await messages.find({ query: {} })) as Paginated<Data>
    expect(page.data.map((message) => message.text)).toEqual(['new'])
    await app.teardown()
  })
})
