import { expect, it } from '@jest/globals'
import { checkNoLeaks } from './no-leaks.js'

// ≥ 100,000 random (rules, write, user) triples on the memory store, in process; RULES_SEED replays a failure.
const seed = Number(process.env.RULES_SEED ?? Date.now() % 1_000_000)

it(`no user receives a record, field or event they could not get (memory, seed ${seed})`, async () => {
  const triples = await checkNoLeaks({ seed, trials: Number(process.env.RULES_TRIALS ?? 2100), writes: 16 })
  expect(triples).toBeGreaterThanOrEqual(process.env.RULES_TRIALS ? 1 : 100_000)
}, 600_000)
