import axios from 'axios'
import request from 'request'
import { io, type Socket } from 'socket.io-client'
import superagent from 'superagent'
import { authentication } from '../src/interfaces/client/authentication/authentication-client.js'
import { createClient, type ClientApp } from '../src/interfaces/client/client-app.js'
import type { JQueryLike } from '../src/interfaces/client/rest/http-libraries.js'
import { rest } from '../src/interfaces/client/rest/rest-client.js'
import { socketio, type SocketioTransport } from '../src/interfaces/client/socket/socketio-transport.js'

// REST: one transport per client, with whichever HTTP library the app already uses.
export const withFetch = (url: string) => createClient().configure(rest(url).fetch(fetch))
export const withAxios = (url: string) => createClient().configure(rest(url).axios(axios))
export const withSuperagent = (url: string) => createClient().configure(rest(url).superagent(superagent))
export const withJquery = (url: string, $: JQueryLike) => createClient().configure(rest(url).jquery($))
/** `request` is deprecated upstream: legacy support only. */
export const withRequest = (url: string) => createClient().configure(rest(url).request(request))

// Socket.io: calls and live events over one connection.
export const withSocket = (url: string) => createClient().configure(socketio(io(url, { transports: ['websocket'] })))

/** Sign up, log in (the token is kept and sent from then on), post, read the newest page, log out. */
export async function chat(client: ClientApp, email: string, password: string) {
  client.configure(authentication())
  await client.service('users').create({ email, password })
  const { user } = await client.authenticate({ strategy: 'local', email, password })
  await client.service('messages').create({ text: `Hello from ${email}` })
  const page = await client.service('messages').find({ query: { $sort: { id: -1 }, $limit: 5 } })
  await client.logout()
  return { user, page }
}

// `npm run example -- use-the-clients [url]`: the chat above over fetch, then over a socket, against a
// running server (`npm start` in another terminal; default http://127.0.0.1:3030).
export async function main(url = 'http://127.0.0.1:3030'): Promise<void> {
  await fetch(`${url}/health`).catch(() => {
    throw new Error(`no server answers at ${url}: start one with npm start (in another terminal), or pass its URL`)
  })
  const run = Date.now().toString(36)
  const rest = await chat(withFetch(url), `fetch-${run}@example.com`, 'secret-pw')
  console.log('fetch: signed up and logged in as', rest.user, 'then read', rest.page)
  const client = withSocket(url)
  try {
    const { user, page } = await chat(client, `socket-${run}@example.com`, 'secret-pw')
    console.log('socket.io: signed up and logged in as', user, 'then read', page)
  } finally {
    ;((client.transport as SocketioTransport).socket as Socket).close()
  }
}
