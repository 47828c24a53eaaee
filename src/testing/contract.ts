/**
 * The runner of the adapter kit: a contract is a set of named cases, and an adapter runs the ones it
 * names. Define a contract once, registering its cases with `test` and grouping them with `group`:
 *
 *   export const runKeysContract = defineContract<{ keys(): Keys }>('Keys', ({ group, test, expect }, options) => {
 *     group('claim', () => {
 *       test('lets one of two claims win', async () => {
 *         const keys = options.keys()
 *         expect([await keys.claim('k'), await keys.claim('k')]).toEqual([true, false])
 *       })
 *     })
 *   })
 *
 * and run it beside each adapter, naming the cases it runs:
 *
 *   runKeysContract({ adapter: 'redis', cases: ['claim'], keys: () => new RedisKeys() })
 *
 * A case's name is its groups and title joined by ' / ' ('claim / lets one of two claims win'). An entry of
 * `cases` selects that case or every case of that group; 'all' selects every case. The others are registered
 * skipped (the runner counts them) and named in one line when the suite ends; an entry that selects nothing
 * throws while the suite is defined, so a typo or a renamed case cannot pass unseen. `describe` blocks add
 * no name (e.g. one run per fixture variant: the same cases twice), and the contract reads `options` only
 * inside hooks and cases.
 *
 * The test functions are the runner's globals (jest; vitest with `globals: true`), taken when the contract
 * runs; other runners pass them as `api` (mocha: `{ describe, it, beforeAll: before, afterAll: after,
 * beforeEach, afterEach, expect }` with `expect` from the `expect` package). Cases assert with jest's `expect`.
 */

/** What a case or hook body may return: nothing, or a promise the runner awaits. */
type Body = () => unknown

/** The test functions the kit uses: jest's names and signatures (vitest has the same). */
export interface TestApi {
  describe(title: string, body: () => void): void
  it: ((title: string, body: Body, timeoutMs?: number) => void) & { skip(title: string, body: Body): void }
  beforeAll(body: Body, timeoutMs?: number): void
  afterAll(body: Body, timeoutMs?: number): void
  beforeEach(body: Body, timeoutMs?: number): void
  afterEach(body: Body, timeoutMs?: number): void
  expect: typeof expect
}

/** What a contract's definition registers its cases with. */
export interface ContractTools extends Omit<TestApi, 'it'> {
  /** A named case: run when the adapter selects it, registered skipped otherwise. */
  test(title: string, body: Body, timeoutMs?: number): void
  /** Cases that share hooks; its name prefixes theirs and selects all of them. */
  group(name: string, body: () => void): void
}

/** How an adapter runs a contract. */
export interface RunOptions {
  /** Names the adapter in the suite's title and its skip line (e.g. 'memory', 'rethinkdb'). */
  adapter: string
  /** The cases (or groups) this adapter runs, by name; 'all' for every case. */
  cases: 'all' | readonly string[]
  /** The test functions; the global ones when omitted. */
  api?: TestApi
  /** Where the skip line goes; standard error when omitted. */
  report?: (line: string) => void
}

/** A defined contract: call it to register its suite for one adapter. */
export type Contract<O> = ((options: O & RunOptions) => void) & { readonly contractName: string }

export const CASE_SEPARATOR = ' / '

/** Where a block's body runs: its name path and the titles registered in it so far. */
interface Frame {
  path: readonly string[]
  titles: Set<string>
}

export function defineContract<O = object>(
  contractName: string,
  define: (tools: ContractTools, options: O) => void
): Contract<O> {
  const run = (options: O & RunOptions): void => {
    const api = options.api ?? globalTestApi()
    const report = options.report ?? ((line: string) => void process.stderr.write(`${line}\n`))
    const suite = `${contractName} contract on ${options.adapter}`
    const entries = options.cases === 'all' ? undefined : [...options.cases]
    const known = new Set<string>()
    const selected = new Set<string>()
    const used = new Set<string>()
    let frame: Frame = { path: [], titles: new Set() }
    // Blocks registered but not yet collected: runners that collect lazily (vitest) run bodies later.
    let pending = 0

    /** A block whose body runs in its own frame; the last one to finish checks the selection. */
    const block = (title: string, named: boolean, body: () => void): void => {
      const parent = frame.path
      pending++
      api.describe(title, () => {
        const outer = frame
        frame = { path: named ? [...parent, title] : parent, titles: new Set() }
        try {
          body()
        } finally {
          frame = outer
          pending--
        }
        if (pending === 0) finish()
      })
    }

    /** Names are split at the separator: a group or title holding one would select the wrong cases. */
    const refuseSeparator = (kind: string, name: string): void => {
      if (name.includes(CASE_SEPARATOR))
        throw new Error(`${suite}: a ${kind} may not contain '${CASE_SEPARATOR}': '${name}'`)
    }

    const finish = (): void => {
      const unknown = (entries ?? []).filter((entry) => !used.has(entry))
      if (unknown.length > 0) {
        const groups = groupsOf(known)
        const names = groups.size > 0 ? `Its groups: ${[...groups].join(', ')}` : `Its cases: ${quoted([...known])}`
        throw new Error(`${suite}: no case is named ${quoted(unknown)}. ${names}`)
      }
      // Nothing runs, so no hook will: say it now.
      if (selected.size === 0) report(skipLine(suite, known, selected))
    }

    const tools: ContractTools = {
      describe: (title, body) => block(title, false, body),
      group(name, body) {
        refuseSeparator('group name', name)
        block(name, true, body)
      },
      test(title, body, timeoutMs) {
        refuseSeparator('case title', title)
        if (frame.titles.has(title)) throw new Error(`${suite}: two cases are titled '${title}' in one block`)
        frame.titles.add(title)
        const name = [...frame.path, title].join(CASE_SEPARATOR)
        known.add(name)
        const hits = entries?.filter((entry) => selects(entry, name))
        for (const entry of hits ?? []) used.add(entry)
        if (!hits || hits.length > 0) {
          selected.add(name)
          api.it(title, body, timeoutMs)
        } else api.it.skip(title, body)
      },
      beforeAll: api.beforeAll,
      afterAll: api.afterAll,
      beforeEach: api.beforeEach,
      afterEach: api.afterEach,
      expect: api.expect
    }

    block(suite, false, () => {
      api.afterAll(() => {
        if (selected.size < known.size) report(skipLine(suite, known, selected))
      })
      define(tools, options)
    })
  }
  return Object.assign(run, { contractName })
}

const quoted = (names: readonly string[]): string => names.map((name) => `'${name}'`).join(', ')

/** Whether a `cases` entry names this case or one of its groups. */
function selects(entry: string, name: string): boolean {
  return name === entry || name.startsWith(`${entry}${CASE_SEPARATOR}`)
}

/** Every group path of the known cases, outermost first ('live', 'live / publish', …). */
function groupsOf(known: ReadonlySet<string>): Set<string> {
  const groups = new Set<string>()
  for (const name of known) {
    const parts = name.split(CASE_SEPARATOR)
    for (let n = 1; n < parts.length; n++) groups.add(parts.slice(0, n).join(CASE_SEPARATOR))
  }
  return groups
}

/** One line naming what was skipped: a whole group by its name and size, other cases by name. */
function skipLine(suite: string, known: ReadonlySet<string>, selected: ReadonlySet<string>): string {
  const skipped = [...known].filter((name) => !selected.has(name))
  const named: string[] = []
  const covered = new Set<string>()
  for (const name of skipped) {
    if (covered.has(name)) continue
    const parts = name.split(CASE_SEPARATOR)
    let label = name
    for (let n = 1; n < parts.length; n++) {
      const group = parts.slice(0, n).join(CASE_SEPARATOR)
      const members = [...known].filter((other) => selects(group, other))
      if (members.every((member) => !selected.has(member))) {
        label = `${group} (${members.length} ${members.length === 1 ? 'case' : 'cases'})`
        for (const member of members) covered.add(member)
        break
      }
    }
    named.push(label)
  }
  return `${suite}: skipped ${skipped.length} of ${known.size} cases, not listed by the adapter: ${named.join('; ')}`
}

/** jest's (or vitest's) globals; a clear error under a runner without them. */
function globalTestApi(): TestApi {
  const scope = globalThis as unknown as Partial<TestApi>
  const missing = (['describe', 'it', 'beforeAll', 'afterAll', 'beforeEach', 'afterEach', 'expect'] as const).filter(
    (name) => typeof scope[name] !== 'function'
  )
  if (missing.length > 0)
    throw new Error(`No global ${missing.join(', ')}: run the kit under jest or vitest (globals), or pass \`api\``)
  return scope as TestApi
}
