import { describe, expect, it } from '@jest/globals'
import { InMemoryUniqueKeys } from '../../src/infrastructure/memory/in-memory-unique-keys.js'
import { failure, sessionsApp } from '../support/sessions-app.js'

/*
 * README "Schemas", unique fields: the reference app keeps an email as typed (trimmed), compares it
 * case-insensitively for uniqueness, for finds by email and for login, and still finds the records an
 * earlier version stored lower-cased (their keys were claimed without a holder).
 */
describe('users: emails keep the case typed', () => {
  it('stores and answers the email as typed, trimmed', async () => {
    const { app, signUp } = await sessionsApp()
    const user = await signUp(' Ann.Lee@Example.com ')
    expect(user.email).toBe('Ann.Lee@Example.com')
    expect(await app.service('users').get(user.id)).toMatchObject({ email: 'Ann.Lee@Example.com' })
  })

  it('refuses the same email in other letters, and finds and logs in by it in any case', async () => {
    const { app, signUp, login } = await sessionsApp()
    const user = await signUp('Ann.Lee@Example.com')
    await expect(signUp('ann.lee@example.COM')).rejects.toMatchObject({
      code: 409,
      message: 'email already registered'
    })
    for (const email of ['ann.lee@example.com', 'ANN.LEE@EXAMPLE.COM', ' Ann.Lee@Example.com']) {
      expect(await login(email, 'password-1')).toMatchObject({ user: { id: user.id, email: 'Ann.Lee@Example.com' } })
      expect(await app.service('users').find({ query: { email } })).toMatchObject({
        total: 1,
        data: [{ id: user.id, email: 'Ann.Lee@Example.com' }]
      })
    }
    // Other conditions still apply, the id among them.
    expect(await app.service('users').find({ query: { email: 'ann.lee@example.com', id: user.id } })).toMatchObject({
      total: 1
    })
    expect(await app.service('users').find({ query: { email: 'ann.lee@example.com', id: 999 } })).toMatchObject({
      total: 0
    })
    expect(await app.service('users').find({ query: { email: 'nobody@example.com' } })).toMatchObject({ total: 0 })
    expect(await failure(login('ann.lee@example.com', 'wrong-password'))).toMatchObject({ code: 401 })
  })

  it('follows a changed email: the new one logs in in any case, the old one is free', async () => {
    const { app, signUp, login, bearer } = await sessionsApp()
    const user = await signUp('old.name@x.io')
    const { accessToken } = await login('old.name@x.io', 'password-1')
    await app.service('users').patch(user.id, { email: 'New.Name@X.io' }, bearer(accessToken))
    expect(await login('new.name@x.io', 'password-1')).toMatchObject({ user: { email: 'New.Name@X.io' } })
    expect(await failure(login('old.name@x.io', 'password-1'))).toMatchObject({ code: 401 })
    await expect(signUp('Old.Name@x.io')).resolves.toMatchObject({ email: 'Old.Name@x.io' })
    await expect(login('OLD.NAME@X.IO', 'password-1')).resolves.toMatchObject({ user: { email: 'Old.Name@x.io' } })
  })

  it('keeps records stored lower-cased by an earlier version working: login in any case, the email stays taken', async () => {
    const uniqueKeys = new InMemoryUniqueKeys()
    const { app, signUp, login, bearer } = await sessionsApp({ uniqueKeys })
    const user = await signUp('legacy@x.io')
    // An earlier version claimed keys without recording their holder.
    await uniqueKeys.release('users.email', 'legacy@x.io')
    await uniqueKeys.claim('users.email', 'legacy@x.io')
    expect(await uniqueKeys.holder('users.email', 'legacy@x.io')).toBeUndefined()
    expect(await login('Legacy@X.io', 'password-1')).toMatchObject({ user: { id: user.id, email: 'legacy@x.io' } })
    await expect(signUp('LEGACY@x.io')).rejects.toMatchObject({ code: 409 })
    // Its next write of the email records the holder: a new spelling is found too.
    const { accessToken } = await login('legacy@x.io', 'password-1')
    await app.service('users').patch(user.id, { email: 'Legacy@X.io' }, bearer(accessToken))
    expect(await uniqueKeys.holder('users.email', 'legacy@x.io')).toBe(user.id)
    expect(await login('legacy@x.io', 'password-1')).toMatchObject({ user: { email: 'Legacy@X.io' } })
  })
})
