/** The part of autocannon's programmatic API the benchmarks use (it ships no types). */
declare module 'autocannon' {
  interface Options {
    url: string
    connections?: number
    duration?: number
    /** Seconds before a request counts as an error (default 10). */
    timeout?: number
    method?: string
    headers?: Record<string, string>
    body?: string
    /** Called before each request: may change its path (e.g. to spread writes over records) or its headers. */
    requests?: { setupRequest?: <R extends { path: string; headers?: Record<string, string> }>(request: R) => R }[]
  }
  interface Result {
    requests: { average: number; total: number }
    latency: { p99: number; average: number }
    /** Elapsed seconds. */
    duration: number
    errors: number
    non2xx: number
  }
  function autocannon(options: Options): Promise<Result>
  export default autocannon
}
