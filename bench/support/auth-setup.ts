/** What both servers of `npm run bench:rest` share for the authenticated workloads. */
export const BENCH_SECRET = 'bench-secret-0123456789abcdef'
export const BENCH_USER = { email: 'bench@example.com', password: 'bench-password' }
/** The service behind `authenticate('jwt')` on both servers, seeded like `messages`. */
export const SECURE_PATH = 'secure'

/** Logs in on a running server and returns the header the authenticated workloads send. */
export async function bearerHeader(url: string): Promise<Record<string, string>> {
  const response = await fetch(`${url}/authentication`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ strategy: 'local', ...BENCH_USER })
  })
  const body = (await response.json()) as { accessToken?: string }
  if (response.status !== 201 || !body.accessToken)
    throw new Error(`login on ${url} failed with status ${response.status}`)
  return { authorization: `Bearer ${body.accessToken}` }
}
