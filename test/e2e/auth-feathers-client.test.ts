import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import authClientModule from '@feathersjs/authentication-client'
import { feathers } from '@feathersjs/feathers'
import restClientModule from '@feathersjs/rest-client'
import axios from 'axios'
import { ENGINES } from '../interfaces/http/http-test-server.js'
import { AUTH_SECRET, startAuthServer, type AuthServer } from '../support/auth-server.js'

// Both packages are CommonJS whose `module.exports` also carries the ESM `default`.
const restClient = restClientModule.default
const authClient = authClientModule.default

const connections: [string, (url: string) => ReturnType<ReturnType<typeof restClient>['fetch']>][] = [
  ['fetch', (url: string) => restClient(url).fetch(fetch)],
  ['axios', (url: string) => restClient(url).axios(axios)]
]

describe.each(ENGINES)('on %s', (engine) => {
  let server: AuthServer
  beforeAll(async () => {
    server = await startAuthServer({ AUTH_SECRET, HTTP: engine })
    await fetch(`${server.url}/users`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'f@x.io', password: 'secret-pw' })
    })
  })
  afterAll(() => server.close())

  describe.each(connections)('@feathersjs/authentication-client + rest-client (%s)', (_library, connect) => {
    it('logs in, uses protected services, re-authenticates and logs out', async () => {
      const storage = new authClientModule.MemoryStorage()
      const app = feathers().configure(connect(server.url)).configure(authClient({ storage }))
      const logins: unknown[] = []
      app.on('login', (result: unknown) => logins.push(result))
      const result = await app.authenticate({ strategy: 'local', email: 'f@x.io', password: 'secret-pw' })
      expect(result).toMatchObject({
        accessToken: expect.any(String),
        authentication: { strategy: 'local' },
        user: { email: 'f@x.io' }
      })
      expect(await storage.getItem('feathers-jwt')).toBe(result.accessToken)

      const message = await app.service('messages').create({ text: 'from feathers' })
      expect(message).toMatchObject({ text: 'from feathers', userId: result.user.id })

      const again = await app.reAuthenticate(true)
      expect(again.accessToken).toBe(result.accessToken)
      await app.logout()
      expect(await storage.getItem('feathers-jwt')).toBeFalsy()
      await expect(app.service('messages').find()).rejects.toMatchObject({ name: 'NotAuthenticated', code: 401 })
      expect(logins).toHaveLength(2)
    })

    it('rejects a wrong password with NotAuthenticated "Invalid login" and stores nothing', async () => {
      const storage = new authClientModule.MemoryStorage()
      const app = feathers().configure(connect(server.url)).configure(authClient({ storage }))
      await expect(app.authenticate({ strategy: 'local', email: 'f@x.io', password: 'nope' })).rejects.toMatchObject({
        name: 'NotAuthenticated',
        message: 'Invalid login',
        code: 401
      })
      expect(await storage.getItem('feathers-jwt')).toBeFalsy()
    })

    it('drops a stored token the server refuses', async () => {
      const storage = new authClientModule.MemoryStorage()
      await storage.setItem('feathers-jwt', 'not-a-token')
      const app = feathers().configure(connect(server.url)).configure(authClient({ storage }))
      await expect(app.reAuthenticate()).rejects.toMatchObject({ name: 'NotAuthenticated', message: 'jwt malformed' })
      expect(await storage.getItem('feathers-jwt')).toBeFalsy()
    })
  })
})
