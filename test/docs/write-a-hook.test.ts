import { describe, expect, it } from '@jest/globals'
import { App } from '../../src/application/app.js'
import { AdapterService } from '../../src/application/adapter-service.js'
import { FakeClock } from '../support/fake-clock.js'
import { InMemoryStore } from '../../src/infrastructure/memory/in-memory-store.js'
import { useHooks } from '../../examples/write-a-hook.js'

describe('the hooks of "Write a hook"', () => {
  it('stamps createdAt from the clock and logs every call once', async () => {
    const app = new App()
    app.use('messages', new AdapterService(new InMemoryStore(), { multi: ['create'] }))
    const lines: string[] = []
    useHooks(app, new FakeClock(1_700_000_000_000), (line) => lines.push(line))
    const created = await app.service('messages').create([{ text: 'a' }, { text: 'b' }], {})
    expect(created).toEqual([
      { id: 0, text: 'a', createdAt: 1_700_000_000_000 },
      { id: 1, text: 'b', createdAt: 1_700_000_000_000 }
    ])
    await app.service('messages').find({})
    expect(lines).toEqual([
      expect.stringMatching(/^messages\.create took \d+ ms$/),
      expect.stringMatching(/^messages\.find took \d+ ms$/)
    ])
  })
})
