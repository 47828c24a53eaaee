import { describe, expect, it } from '@jest/globals'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { App } from '../../src/application/app.js'
import type { Connection } from '../../src/domain/service/service.js'
import {
  ReceivedEvents,
  runRealtimeTransportContract,
  type ReceivedEvent,
  type RealtimeClient
} from '../../src/testing/realtime-transport.contract.js'
import { connectNdjson, ndjsonTransport } from '../../examples/add-a-transport.js'
import { allHttpEngines } from '../support/http-engines.js'

const httpEngines = await allHttpEngines()
import { startOnHttpServer } from '../support/realtime-server.js'

/** A client of the example transport for the contract: one ref per call, event lines into `events`. */
async function connectClient(url: string, headers?: Record<string, string>): Promise<RealtimeClient> {
  const client = await connectNdjson(url, headers)
  const events = new ReceivedEvents()
  const answers = new Map<unknown, { resolve(result: unknown): void; reject(error: unknown): void }>()
  void (async () => {
    for (let line = await client.lines.next(); !line.done; line = await client.lines.next()) {
      const { ref, result, error } = line.value
      if (ref === undefined) events.add(line.value as unknown as ReceivedEvent)
      else if (error !== undefined) answers.get(ref)?.reject(error)
      else answers.get(ref)?.resolve(result)
    }
  })()
  let refs = 0
  return {
    events,
    closed: new Promise<void>((resolve) => client.socket.once('close', () => resolve())),
    call: (path, method, { id, data, query } = {}) =>
      new Promise((resolve, reject) => {
        const ref = ++refs
        answers.set(ref, { resolve, reject })
        client.send({ ref, path, method, id, data, query })
      }),
    close: () => client.socket.end()
  }
}

runRealtimeTransportContract({
  adapter: '"Add a transport": newline-delimited JSON over TCP (examples/add-a-transport.ts)',
  cases: 'all',
  provider: 'ndjson',
  start: startOnHttpServer(ndjsonTransport, connectClient)
})

describe('"Add a transport": what only the ndjson wire has', () => {
  it('answers lines that are not JSON objects, or name no method, with a 400 and keeps serving', async () => {
    const app = new App()
    app.use('echo', {
      async find() {
        return 'still here'
      }
    })
    const server = createServer()
    const transport = ndjsonTransport(app, server, {})
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const client = await connectNdjson(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
    const next = async () => (await client.lines.next()).value as Record<string, unknown>
    for (const line of ['not json', '[1]', '"text"']) {
      client.send(line)
      expect(await next()).toMatchObject({
        error: { name: 'BadRequest', code: 400, message: 'Each line must be a JSON object' }
      })
    }
    client.send({ ref: 1, path: 'echo' })
    expect(await next()).toMatchObject({ ref: 1, error: { name: 'BadRequest', message: 'Every line needs a method' } })
    client.send({ ref: 2, path: 'echo', method: 'find' })
    expect(await next()).toEqual({ ref: 2, result: 'still here' })
    const closed = new Promise((resolve) => client.socket.once('close', resolve))
    const gone = new Promise<Connection>((resolve) => app.once('disconnect', resolve))
    transport.disconnectAll()
    await Promise.all([closed, gone])
    await new Promise((resolve) => server.close(resolve))
  })

  it.each(Object.keys(httpEngines))(
    'shares the port of the %s engine with REST, as REALTIME would start it',
    async (engine) => {
      const app = new App()
      app.use('echo', {
        async find() {
          return 'over both'
        }
      })
      await app.setup()
      const http = httpEngines[engine]!(app, {})
      const transport = ndjsonTransport(app, http.server, {})
      const running = await http.listen(0, '127.0.0.1')
      const client = await connectNdjson(running.url)
      client.send({ ref: 1, path: 'echo', method: 'find' })
      expect((await client.lines.next()).value).toEqual({ ref: 1, result: 'over both' })
      expect(await (await fetch(`${running.url}/echo`)).json()).toBe('over both')
      transport.disconnectAll()
      await running.close()
    }
  )
})
