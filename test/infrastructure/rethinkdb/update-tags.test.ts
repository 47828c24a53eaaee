import { UpdateTags } from '../../../src/infrastructure/rethinkdb/update-tags.js'

describe('UpdateTags', () => {
  let now = 0
  const tags = (): UpdateTags => new UpdateTags(1_000, () => now)
  beforeEach(() => {
    now = 0
  })

  it('reports an expected change once', () => {
    const t = tags()
    t.expect('a')
    expect(t.consume('a')).toBe(true)
    expect(t.consume('a')).toBe(false)
  })

  it('reports nothing for ids it was not told about', () => {
    expect(tags().consume('a')).toBe(false)
  })

  it('keeps the number 0 and the string "0" apart', () => {
    const t = tags()
    t.expect(0)
    expect(t.consume('0')).toBe(false)
    expect(t.consume(0)).toBe(true)
  })

  it('counts several expectations for one id', () => {
    const t = tags()
    t.expect('a')
    t.expect('a')
    expect(t.consume('a')).toBe(true)
    expect(t.consume('a')).toBe(true)
    expect(t.consume('a')).toBe(false)
  })

  it('forgets an expectation that was withdrawn', () => {
    const t = tags()
    const withdraw = t.expect('a')
    withdraw()
    withdraw()
    expect(t.consume('a')).toBe(false)
    expect(t.size).toBe(0)
  })

  it('lets expectations expire, so a lost change cannot mislabel a later patch', () => {
    const t = tags()
    t.expect('a')
    now = 1_001
    expect(t.consume('a')).toBe(false)
  })

  it('prunes expired ids instead of growing without bound', () => {
    const t = tags()
    for (let i = 0; i < 1_000; i++) t.expect(i)
    now = 2_000
    t.expect('fresh')
    expect(t.size).toBe(1)
  })
})
