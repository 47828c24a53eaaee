import type { ContractTools } from '../contract.js'
import type { InstanceClient, ServerInstance, SharedDatabase } from './multi-instance.contract.js'

/*
 * What the multi-instance contract's cases do to the reference app on an instance: REST calls with a
 * token (the runtime's fetch), accounts, and checks over the events clients received.
 */

export const PASSWORD = 'correct horse battery staple'

/** Calls a service over REST with a token; resolves with the status and the JSON body. */
export async function call(
  url: string,
  token: string,
  method: string,
  path: string,
  body?: unknown
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}/${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} }
}

/** Signs up (once per email; a second instance finds the account already there) and logs in over REST. */
export async function signUp(url: string, email: string): Promise<string> {
  await fetch(`${url}/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD })
  })
  const login = await fetch(`${url}/authentication`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ strategy: 'local', email, password: PASSWORD })
  })
  if (login.status !== 201) throw new Error(`login on ${url} answered ${login.status}: ${await login.text()}`)
  return ((await login.json()) as { accessToken: string }).accessToken
}

/** Polls a condition every 50 ms until it holds or `ms` pass; fails naming `what` otherwise. */
export async function until(what: string, condition: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await condition()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`${what}: not within ${ms / 1000} s`)
}

/** `${event} ${id}` → how many times the client received it. */
export function countsOf(client: InstanceClient): Map<string, number> {
  const counts = new Map<string, number>()
  for (const { event, data } of client.received) {
    const key = `${event} ${String(data.id)}`
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  return counts
}

/** The texts of the `messages created` events the client received, in order. */
export const textsOf = (client: InstanceClient): string[] =>
  client.received.filter(({ event }) => event === 'created').map(({ data }) => String(data.text))

/**
 * Checks that every client received exactly the expected events (`${event} ${id}`), each once, and nothing
 * else. Waits for all to arrive, then `settleMs` longer so that doubles would show.
 */
export async function expectExactlyOnce(
  expect: ContractTools['expect'],
  clients: readonly InstanceClient[],
  expected: readonly string[],
  { settleMs = 2_000 } = {}
): Promise<void> {
  const want = new Set(expected)
  await until(
    `every client receives ${expected.length} events`,
    () => clients.every((client) => [...want].every((key) => countsOf(client).has(key))),
    45_000
  )
  await new Promise((resolve) => setTimeout(resolve, settleMs))
  for (const [index, client] of clients.entries()) {
    const counts = countsOf(client)
    const doubled = [...counts].filter(([, count]) => count > 1).map(([key, count]) => `${key} ×${count}`)
    const unexpected = [...counts.keys()].filter((key) => !want.has(key))
    const missing = expected.filter((key) => !counts.has(key))
    expect({ client: index, doubled, unexpected, missing }).toEqual({
      client: index,
      doubled: [],
      unexpected: [],
      missing: []
    })
  }
}

/** Three instances started together on `database`. */
export const threeInstances = (database: SharedDatabase): Promise<ServerInstance[]> =>
  Promise.all([1, 2, 3].map(() => database.start()))
