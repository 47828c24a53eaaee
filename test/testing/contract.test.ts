import { defineContract, type RunOptions, type TestApi } from '../../src/testing/contract.js'

type Body = () => unknown

/** A stand-in runner that records what a contract registers; `lazy` collects nested blocks later, as vitest does. */
function recorder(options: { lazy?: boolean } = {}) {
  const cases: { path: string; skipped: boolean }[] = []
  const afterAlls: Body[] = []
  const queue: (() => void)[] = []
  const path: string[] = []
  const inBlock = (title: string, body: () => void) => () => {
    path.push(title)
    try {
      body()
    } finally {
      path.pop()
    }
  }
  const it = Object.assign(
    (title: string) => {
      cases.push({ path: [...path, title].join(' > '), skipped: false })
    },
    {
      skip: (title: string) => {
        cases.push({ path: [...path, title].join(' > '), skipped: true })
      }
    }
  )
  const api: TestApi = {
    describe(title, body) {
      // Lazy: a nested block runs after the block around it, with that block's path.
      if (options.lazy) {
        const outer = [...path]
        queue.push(() => {
          path.splice(0, path.length, ...outer)
          inBlock(title, body)()
        })
      } else inBlock(title, body)()
    },
    it,
    beforeAll: () => {},
    afterAll: (body) => void afterAlls.push(body),
    beforeEach: () => {},
    afterEach: () => {},
    expect
  }
  const collect = (): void => {
    while (queue.length > 0) queue.shift()!()
  }
  return { api, cases, afterAlls, collect }
}

/** A small contract: two groups, a nested one, and a case outside any group, run twice by a describe. */
const runDemo = defineContract<{ seen?: string[] }>('Demo', ({ describe, group, test }) => {
  for (const variant of ['a', 'b']) {
    describe(`variant ${variant}`, () => {
      test('top case', () => {})
      group('reads', () => {
        test('gets', () => {})
        test('finds', () => {})
        group('pages', () => {
          test('counts', () => {})
        })
      })
      group('writes', () => {
        test('creates', () => {})
      })
    })
  }
})

function runWith(cases: RunOptions['cases'], lazy = false) {
  const runner = recorder({ lazy })
  const lines: string[] = []
  const run = () => {
    runDemo({ adapter: 'stand-in', cases, api: runner.api, report: (line) => lines.push(line) })
    runner.collect()
  }
  return { ...runner, lines, run }
}

describe('defineContract', () => {
  it('registers every case in its blocks, under a suite named after the contract and the adapter', () => {
    const run = runWith('all')
    run.run()
    expect(run.cases.filter((entry) => entry.path.startsWith('Demo contract on stand-in > variant a'))).toEqual([
      { path: 'Demo contract on stand-in > variant a > top case', skipped: false },
      { path: 'Demo contract on stand-in > variant a > reads > gets', skipped: false },
      { path: 'Demo contract on stand-in > variant a > reads > finds', skipped: false },
      { path: 'Demo contract on stand-in > variant a > reads > pages > counts', skipped: false },
      { path: 'Demo contract on stand-in > variant a > writes > creates', skipped: false }
    ])
    expect(run.cases).toHaveLength(10)
  })

  it('runs the cases and groups the adapter names and registers the others skipped', () => {
    const run = runWith(['reads / pages', 'writes / creates', 'top case'])
    run.run()
    const skipped = run.cases
      .filter((entry) => entry.skipped)
      .map((entry) => entry.path.split(' > ').slice(2).join(' > '))
    expect(skipped).toEqual(['reads > gets', 'reads > finds', 'reads > gets', 'reads > finds'])
  })

  it('names the skipped cases in one line when the suite ends, a whole group by its name', async () => {
    const run = runWith(['top case', 'reads / finds'])
    run.run()
    expect(run.lines).toEqual([])
    for (const body of run.afterAlls) await body()
    expect(run.lines).toEqual([
      'Demo contract on stand-in: skipped 3 of 5 cases, not listed by the adapter: reads / gets; ' +
        'reads / pages (1 case); writes (1 case)'
    ])
  })

  it('reports nothing when every case runs', async () => {
    const run = runWith('all')
    run.run()
    for (const body of run.afterAlls) await body()
    expect(run.lines).toEqual([])
  })

  it('reports at once when no case runs (no hook will)', () => {
    const run = runWith([])
    run.run()
    expect(run.lines).toEqual([
      'Demo contract on stand-in: skipped 5 of 5 cases, not listed by the adapter: top case; reads (3 cases); writes (1 case)'
    ])
  })

  it('throws while the suite is defined when an entry names no case, and lists the groups', () => {
    expect(() => runWith(['reads', 'raeds', 'writes / deletes']).run()).toThrow(
      "Demo contract on stand-in: no case is named 'raeds', 'writes / deletes'. Its groups: reads, reads / pages, writes"
    )
  })

  it('selects and checks the same way when the runner collects nested blocks later (vitest)', async () => {
    const run = runWith(['reads / gets'], true)
    run.run()
    expect(run.cases.filter((entry) => !entry.skipped).map((entry) => entry.path)).toEqual([
      'Demo contract on stand-in > variant a > reads > gets',
      'Demo contract on stand-in > variant b > reads > gets'
    ])
    for (const body of run.afterAlls) await body()
    expect(run.lines).toHaveLength(1)
    expect(() => runWith(['reads / get'], true).run()).toThrow("no case is named 'reads / get'")
  })

  it('lists the cases instead when the contract has no groups', () => {
    const runFlat = defineContract('Flat', ({ test }) => {
      test('one', () => {})
      test('two', () => {})
    })
    expect(() => runFlat({ adapter: 'stand-in', cases: ['three'], api: recorder().api })).toThrow(
      "Flat contract on stand-in: no case is named 'three'. Its cases: 'one', 'two'"
    )
  })

  it('refuses a group name or case title holding the separator', () => {
    const runSlashed = defineContract('Slashed', ({ group, test }) => {
      group('reads / writes', () => test('one', () => {}))
    })
    expect(() => runSlashed({ adapter: 'stand-in', cases: 'all', api: recorder().api })).toThrow(
      "Slashed contract on stand-in: a group name may not contain ' / ': 'reads / writes'"
    )
  })

  it('refuses two cases with one title in one block', () => {
    const runTwice = defineContract('Twice', ({ test }) => {
      test('same', () => {})
      test('same', () => {})
    })
    const runner = recorder()
    expect(() => runTwice({ adapter: 'stand-in', cases: 'all', api: runner.api })).toThrow(
      "Twice contract on stand-in: two cases are titled 'same' in one block"
    )
  })
})

// The same contract under jest itself: the listed cases run, the others show as skipped, and the skip
// line is written to standard error when the suite ends.
const runReal = defineContract<{ value: () => number }>('Runner', ({ group, test, expect }, options) => {
  group('runs', () => {
    test('a listed case with the options it was given', () => {
      expect(options.value()).toBe(42)
    })
  })
  group('skipped', () => {
    test('an unlisted case', () => {
      throw new Error('an unlisted case ran')
    })
  })
})
runReal({ adapter: 'jest', cases: ['runs'], value: () => 42 })
