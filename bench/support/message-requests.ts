/**
 * The requests on one seeded message that the REST benchmarks share (bench:rest, bench:http-core): read record 500,
 * patch record 42, create one; every server seeds the same messages (seed.ts), so they compare like with like.
 */
export const MESSAGE_REQUESTS = [
  { name: 'get', path: '/messages/500' },
  { name: 'patch', method: 'PATCH', path: '/messages/42', body: { text: 'patched text' } },
  {
    name: 'create',
    method: 'POST',
    path: '/messages',
    body: { text: 'a new message', user: 'user1', room: 'random', stars: '3' }
  }
] as const satisfies readonly { name: string; method?: 'POST' | 'PATCH'; path: string; body?: unknown }[]
