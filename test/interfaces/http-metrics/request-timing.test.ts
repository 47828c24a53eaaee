import { once } from 'node:events'
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { noMetrics, type Metrics } from '../../../src/domain/metrics.js'
import { markRoute } from '../../../src/interfaces/http/service-route.js'
import { observeRequests, OTHER_ROUTE } from '../../../src/interfaces/http-metrics/request-timing.js'

/** A metrics port that keeps the HTTP requests it is told of. */
function recording(): Metrics & { requests: [string, string, number][] } {
  const requests: [string, string, number][] = []
  return {
    ...noMetrics,
    enabled: true,
    requests,
    httpRequest: (method, route, status) => requests.push([method, route, status])
  }
}

/** A server answering every request; `/messages/7` is marked as a service's response, as the engines do. */
async function listening(metrics: Metrics): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url === '/messages/7') markRoute(res, { path: 'messages', id: 7 } as never)
    res.statusCode = req.url === '/health' ? 200 : req.url === '/messages/7' ? 201 : 404
    res.end('ok')
  })
  observeRequests(server, metrics, ['/health'])
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return server
}

function get(server: Server, path: string, method = 'GET'): Promise<void> {
  const { port } = server.address() as AddressInfo
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, method, agent: false }, (res) => res.resume().on('end', resolve))
      .on('error', reject)
      .end()
  })
}

describe('request timing (METRICS=true)', () => {
  it('labels each request by method, route template or fixed path, and status', async () => {
    const metrics = recording()
    const server = await listening(metrics)
    try {
      await get(server, '/health')
      await get(server, '/messages/7', 'PATCH')
      await get(server, '/nowhere?x=1')
      expect(metrics.requests).toEqual([
        ['GET', '/health', 200],
        ['PATCH', '/messages/:id', 201],
        ['GET', OTHER_ROUTE, 404]
      ])
    } finally {
      server.close()
    }
  })

  it("counts a server's own requests only, and stops when its server closes", async () => {
    const [first, second] = [recording(), recording()]
    const [one, two] = [await listening(first), await listening(second)]
    await get(one, '/health')
    await get(two, '/health')
    await get(two, '/health')
    expect([first.requests.length, second.requests.length]).toEqual([1, 2])
    two.close()
    await once(two, 'close')
    // The closed server's subscriber is gone: requests to the other one reach only its own port.
    await get(one, '/health')
    expect([first.requests.length, second.requests.length]).toEqual([2, 2])
    one.close()
  })

  it('does not count requests another listener took first (socket.io answers its own before this one sees them)', async () => {
    const metrics = recording()
    const server = createServer()
    server.on('request', (_req, res) => res.end('answered elsewhere'))
    observeRequests(server, metrics, [])
    // Attached as socket.io attaches: it moves the existing listeners behind its own.
    const taken = server.listeners('request') as ((...args: unknown[]) => void)[]
    server.removeAllListeners('request')
    server.on('request', (req, res) => {
      if (req.url?.startsWith('/socket.io/')) return void res.end('socket.io')
      for (const listener of taken) listener(req, res)
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    try {
      await get(server, '/socket.io/?EIO=4')
      await get(server, '/anything')
      expect(metrics.requests).toEqual([['GET', OTHER_ROUTE, 200]])
    } finally {
      server.close()
    }
  })
})
