import { io } from 'socket.io-client'
import type { FeathersError } from '../../domain/errors/errors.js'
import type { Query } from '../../domain/service/service.js'
import { authentication, SESSION_EXPIRED } from '../client/authentication/authentication-client.js'
import { createClient } from '../client/client-app.js'
import type { RemoteService } from '../client/remote-service.js'
import { socketio } from '../client/socket/socketio-transport.js'

/*
 * The chat page (public/index.html), bundled into public/app.js by scripts/build-client.mjs.
 * One socket.io connection carries everything: login, posting, and the message list as a live query of the
 * newest messages (REST would do for the calls, but only a socket receives other people's messages).
 */
interface Message {
  id: string | number
  text: string
  userId?: string | number
  /** The author, resolved by the server (absent when the user is gone). */
  user?: User
  createdAt?: string
}
/** `password` is only ever sent (signing up); the server never returns it. `name` and `avatar` are optional. */
interface User {
  id: string | number
  email: string
  name?: string
  /** A picture URL: the email's Gravatar unless the user gave one. */
  avatar?: string
  password?: string
}

const SESSION_EXPIRED_MESSAGE = 'Your session expired, please log in again.'
/**
 * How long to wait before the first attempt to reconnect after the server closed the connection (doubling, up to 10 s).
 */
const RECONNECT_DELAY = 500
const RECONNECT_MAX_DELAY = 10_000

const PAGE_SIZE = 20
const socket = io({ transports: ['websocket'] })
const client = createClient()
  .configure(socketio(socket))
  .configure(authentication({ storage: window.localStorage }))
// The server does not send types; these are what the reference app's services return.
const messages = client.service('messages') as unknown as RemoteService<Message>
const users = client.service('users') as unknown as RemoteService<User>

const element = <T extends HTMLElement>(id: string) => document.getElementById(id) as T
const loginForm = element<HTMLFormElement>('login')
const chat = element<HTMLElement>('chat')
const list = element<HTMLOListElement>('messages')
const older = element<HTMLButtonElement>('older')
const empty = element<HTMLElement>('empty')
const logoutButton = element<HTMLButtonElement>('logout')
const errorBox = element<HTMLElement>('error')
const statusBox = element<HTMLElement>('status')
/** The shown messages' items by id, with the message they show (as JSON: a changed message gets a new item). */
const shown = new Map<string | number, { json: string; item: HTMLLIElement }>()
/** How many of the newest messages are shown: a page, and one more for each click on "Older messages". */
let limit = PAGE_SIZE
/** The live query (or its fallback) of the signed-in page. */
let following: { stop(): void } | undefined
/** The signed-in user; undefined on the login form. */
let signedIn: User | undefined

/** A user as others see them: the name they chose, else their email. */
const displayName = (user: User) => user.name || user.email

/**
 * Shows what went wrong. A validation error (400, or 409 for a taken email) maps each field to its
 * message in `errors`: each is shown on its own line, so every problem is visible at once.
 */
function showError(error: unknown): void {
  const { name, message, errors } = error as Partial<FeathersError>
  const fieldMessages =
    typeof errors === 'object' && errors !== null
      ? Object.values(errors).filter((text) => typeof text === 'string')
      : []
  errorBox.replaceChildren()
  if (name === 'Timeout') errorBox.textContent = 'The server did not answer. Is it running? Try again in a moment.'
  else if (fieldMessages.length > 0) {
    const list = document.createElement('ul')
    for (const text of fieldMessages) {
      const item = document.createElement('li')
      item.textContent = text as string
      list.append(item)
    }
    errorBox.append(list)
  } else errorBox.textContent = message || String(error)
  errorBox.hidden = false
}

function clearError(): void {
  errorBox.hidden = true
}

/**
 * The author as the message carries it (the server resolves `user`, no lookup here): their picture, then their name,
 * else their email; the email shows on hover. Text only, never HTML from the server.
 */
function authorOf(message: Message): HTMLElement {
  const author = document.createElement('strong')
  const user = message.user
  if (!user) {
    author.textContent = 'someone'
    return author
  }
  if (user.avatar?.startsWith('https://')) {
    const avatar = document.createElement('img')
    avatar.className = 'avatar'
    avatar.src = user.avatar
    avatar.alt = ''
    avatar.referrerPolicy = 'no-referrer'
    author.append(avatar)
  }
  author.append(displayName(user))
  author.title = user.email
  return author
}

/** Today's messages show the time; older ones the date too (and the year when it is not this one). */
function when(createdAt: string): string {
  const date = new Date(createdAt)
  const startOfToday = new Date()
  startOfToday.setHours(0, 0, 0, 0)
  const time = date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })
  if (date >= startOfToday) return time
  const year = date.getFullYear() === startOfToday.getFullYear() ? {} : { year: 'numeric' as const }
  return `${date.toLocaleDateString(undefined, { day: 'numeric', month: 'short', ...year })}, ${time}`
}

/** The "no messages yet" line shows while the list is empty. */
function updateEmpty(): void {
  empty.hidden = list.childElementCount > 0
}

/** One message's item (text only: never HTML from the server). */
function itemOf(message: Message): HTMLLIElement {
  const item = document.createElement('li')
  const time = document.createElement('time')
  const text = document.createElement('span')
  if (message.createdAt) {
    time.dateTime = message.createdAt
    time.textContent = when(message.createdAt)
    time.title = new Date(message.createdAt).toLocaleString()
  }
  text.textContent = message.text
  item.append(authorOf(message), time, text)
  return item
}

/**
 * Shows the newest messages (newest first, as the query sorts them) oldest at the top. An unchanged message keeps its
 * element; when a new one arrives at the bottom it is scrolled into view.
 */
function show(newestFirst: Message[]): void {
  const before = new Map(shown)
  const newest = list.lastElementChild
  shown.clear()
  const items = newestFirst
    .slice()
    .reverse()
    .map((message) => {
      const json = JSON.stringify(message)
      const kept = before.get(message.id)
      const item = kept?.json === json ? kept.item : itemOf(message)
      shown.set(message.id, { json, item })
      return item
    })
  list.replaceChildren(...items)
  older.hidden = newestFirst.length < limit
  updateEmpty()
  if (list.lastElementChild && list.lastElementChild !== newest) list.lastElementChild.scrollIntoView({ block: 'end' })
}

/**
 * Keeps the list: a live query of the newest `limit` messages (README "Live queries"), which resumes by itself after
 * a reconnect. A server with live queries off refuses the watch: then a find, and `created`/`removed` events.
 */
function follow(): void {
  following?.stop()
  const query = { $sort: { createdAt: -1 }, $limit: limit }
  const watch = messages.watch({ query })
  let stopFallback: (() => void) | undefined
  let stopped = false
  const current = {
    stop() {
      stopped = true
      stopFallback?.()
      void watch.unwatch()
    }
  }
  following = current
  // A failed watch after a reconnect; a refused login is the session's business (sessionExpired).
  watch.on('error', (error: unknown) => {
    const { code } = error as Partial<FeathersError>
    if (following === current && !(typeof code === 'number' && code >= 401 && code <= 407)) showError(error)
  })
  void (async () => {
    try {
      for await (const newestFirst of watch) show(newestFirst)
    } catch {
      if (!stopped) stopFallback = await findAndListen(query).catch((error: unknown) => void showError(error))
      if (stopped) stopFallback?.()
    }
  })()
}

/** Without live queries: the newest messages, then `created` and `removed` events applied by hand. */
async function findAndListen(query: Query): Promise<() => void> {
  const page = (await messages.find({ query })) as Message[] | { data: Message[] }
  let newestFirst = Array.isArray(page) ? page : page.data
  const created = (message: Message) => {
    newestFirst = [message, ...newestFirst.filter((other) => other.id !== message.id)].slice(0, limit)
    show(newestFirst)
  }
  const removed = (message: Message) => show((newestFirst = newestFirst.filter((other) => other.id !== message.id)))
  messages.on('created', created as (data: unknown) => void)
  messages.on('removed', removed as (data: unknown) => void)
  show(newestFirst)
  return () => {
    messages.off('created', created as (data: unknown) => void)
    messages.off('removed', removed as (data: unknown) => void)
  }
}

/** Shows the chat with the newest messages (also after a reconnect the server did not resume). */
async function enter(user: User): Promise<void> {
  signedIn = user
  statusBox.textContent = `Signed in as ${displayName(user)}`
  loginForm.hidden = true
  chat.hidden = false
  logoutButton.hidden = false
  clearError()
  follow()
  element<HTMLInputElement>('text').focus()
}

function leave(): void {
  signedIn = undefined
  following?.stop()
  following = undefined
  limit = PAGE_SIZE
  chat.hidden = true
  logoutButton.hidden = true
  loginForm.hidden = false
  statusBox.textContent = ''
}

/**
 * The server no longer accepts this login (logged out elsewhere, or it forgot the user): back to the form, saying why.
 */
function sessionExpired(): void {
  leave()
  showError({ message: SESSION_EXPIRED_MESSAGE })
}

loginForm.addEventListener('submit', async (event) => {
  event.preventDefault()
  const signUp = (event.submitter as HTMLButtonElement | null)?.value === 'signup'
  const email = element<HTMLInputElement>('email').value.trim()
  const password = element<HTMLInputElement>('password').value
  const name = element<HTMLInputElement>('name').value.trim()
  try {
    if (signUp) await users.create({ email, password, ...(name ? { name } : {}) })
    const result = await client.authenticate({ strategy: 'local', email, password })
    element<HTMLInputElement>('password').value = ''
    await enter(result.user as User)
  } catch (error) {
    showError(error)
  }
})

element<HTMLFormElement>('post').addEventListener('submit', async (event) => {
  event.preventDefault()
  const input = element<HTMLInputElement>('text')
  // Sent as typed: the server trims, and refuses an empty or over-long message with a message to show.
  const text = input.value
  try {
    // The list shows it when the live query (or the `created` event) brings it.
    await messages.create({ text })
    input.value = ''
    clearError()
  } catch (error) {
    showError(error)
  }
})

older.addEventListener('click', () => {
  limit += PAGE_SIZE
  follow()
})
logoutButton.addEventListener('click', () => {
  client.logout().then(leave, showError)
})

/*
 * Connection loss. socket.io reconnects by itself after a network failure or a server shutdown,
 * but not after a server-side disconnect: then the page reconnects, with a growing delay while the
 * server is away. A reconnection the server resumed (within SOCKET_RECOVERY_WINDOW) brings every
 * change the live query missed meanwhile, still logged in: nothing to do. Otherwise the client says
 * `events-lost`: a signed-in page logs in again with the stored token and watches the newest messages
 * again (what it missed); a login the server no longer accepts (the user is gone, the session was revoked) sends
 * it back to the form, saying why.
 */
let reconnects = 0
let reconnectTimer: ReturnType<typeof setTimeout> | undefined

function reconnectLater(): void {
  clearTimeout(reconnectTimer)
  const delay = Math.min(RECONNECT_DELAY * 2 ** reconnects++, RECONNECT_MAX_DELAY)
  reconnectTimer = setTimeout(() => {
    if (!socket.connected && !socket.active) socket.connect()
  }, delay)
}

async function resume(): Promise<void> {
  try {
    const result = await client.reAuthenticate(true)
    await enter(result.user as User)
  } catch (error) {
    const { code } = error as Partial<FeathersError>
    if (typeof code === 'number' && code >= 401 && code <= 407) sessionExpired()
    else showError(error)
  }
}

socket.on('connect', () => {
  element('offline').hidden = true
  reconnects = 0
})
client.on('events-lost', () => {
  if (signedIn) void resume()
})
socket.on('disconnect', (reason) => {
  element('offline').hidden = false
  if (reason === 'io server disconnect') reconnectLater()
})
socket.on('connect_error', () => {
  element('offline').hidden = false
  // While socket.io retries by itself (the socket is still active) it is left to do so.
  if (!socket.active) reconnectLater()
})

// The client refreshes the 15-minute access token by itself, in place on this socket. When the
// session cannot be refreshed (logged out elsewhere, password changed, 30 days without a visit) the
// connection is anonymous again: back to the form, saying why.
client.on(SESSION_EXPIRED, sessionExpired)

// A token kept in localStorage from an earlier visit logs in again without the form (refreshed when it expired).
client.reAuthenticate().then((result) => enter(result.user as User), leave)
