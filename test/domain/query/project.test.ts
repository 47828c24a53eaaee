import { project } from '../../../src/domain/query/project.js'

describe('project ($select)', () => {
  const record = { id: 7, name: 'Ann', address: { city: 'Rome' }, age: 3 }

  it('returns the record itself without $select', () => {
    expect(project(record, undefined, 'id')).toBe(record)
  })

  it('keeps the listed fields and the id, in a new object', () => {
    const projected = project(record, ['age', 'name'], 'id')
    expect(projected).toEqual({ id: 7, name: 'Ann', age: 3 })
    expect(projected).not.toBe(record)
  })

  it('keeps only the id when nothing listed exists, and names are literal (no dotted paths)', () => {
    expect(project(record, ['password', 'address.city'], 'id')).toEqual({ id: 7 })
    expect(project(record, [], 'id')).toEqual({ id: 7 })
  })

  it('never copies inherited members, and uses the configured id field', () => {
    expect(project({ _id: 'a', name: 'Ann' }, ['toString', 'name'], '_id')).toEqual({ _id: 'a', name: 'Ann' })
    expect(project({ name: 'no id' }, ['name'], 'id')).toEqual({ name: 'no id' })
  })
})
