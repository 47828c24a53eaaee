import { io } from 'socket.io-client'
import type { FeathersError } from '../../domain/errors/errors.js'
import type { CursorPage } from '../../domain/service/service.js'
import { authentication, SESSION_EXPIRED } from '../client/authentication/authentication-client.js'
import { createClient } from '../client/client-app.js'
import type { RemoteService } from '../client/remote-service.js'
import { socketio } from '../client/socket/socketio-transport.js'

/*
 * The chat page (public/index.html), bundled into public/app.js by scripts/build-client.mjs.
 * One socket.io connection carries everything: login, history, posting and live `created` events
 * (REST would do for the calls, but only a socket receives other people's messages).
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
const shown = new Set<string | number>()
/**
 * Where the next page back in time starts: the `next` cursor of the last history page ('' before the first, null
 * once the oldest is shown). A cursor, unlike a skip count, stays right while new messages arrive live.
 */
let olderCursor: string | null = ''
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

/** Renders one message (text only: never HTML from the server); `atTop` for older history pages. */
function render(message: Message, atTop = false): void {
  if (shown.has(message.id)) return
  shown.add(message.id)
  const item = document.createElement('li')
  const author = authorOf(message)
  const time = document.createElement('time')
  const text = document.createElement('span')
  if (message.createdAt) {
    time.dateTime = message.createdAt
    time.textContent = when(message.createdAt)
    time.title = new Date(message.createdAt).toLocaleString()
  }
  text.textContent = message.text
  item.append(author, time, text)
  if (atTop) list.prepend(item)
  else {
    list.append(item)
    item.scrollIntoView({ block: 'end' })
  }
  updateEmpty()
}

/** The next page back in time: newest first from the server, so each is prepended; never counts the table. */
async function loadOlder(): Promise<void> {
  if (olderCursor === null) return
  const page = (await messages.find({
    query: { $sort: { createdAt: -1 }, $limit: PAGE_SIZE, $after: olderCursor, $count: false }
  })) as CursorPage<Message>
  for (const message of page.data) render(message, true)
  olderCursor = page.next
  older.hidden = olderCursor === null
  updateEmpty()
}

/** Shows the chat with the newest page of messages (also after a reconnect: what was missed comes with it). */
async function enter(user: User): Promise<void> {
  signedIn = user
  statusBox.textContent = `Signed in as ${displayName(user)}`
  loginForm.hidden = true
  chat.hidden = false
  logoutButton.hidden = false
  clearError()
  list.replaceChildren()
  shown.clear()
  olderCursor = ''
  await loadOlder()
  list.lastElementChild?.scrollIntoView({ block: 'end' })
  element<HTMLInputElement>('text').focus()
}

function leave(): void {
  signedIn = undefined
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
    // The event usually arrives before the answer; render() ignores the second copy.
    render(await messages.create({ text }))
    input.value = ''
    clearError()
  } catch (error) {
    showError(error)
  }
})

older.addEventListener('click', () => loadOlder().catch(showError))
logoutButton.addEventListener('click', () => {
  client.logout().then(leave, showError)
})
messages.on('created', (message) => render(message as Message))

/*
 * Connection loss. socket.io reconnects by itself after a network failure or a server shutdown,
 * but not after a server-side disconnect: then the page reconnects, with a growing delay while the
 * server is away. A reconnection the server resumed (within SOCKET_RECOVERY_WINDOW) brings every
 * message missed meanwhile, still logged in: nothing to do. Otherwise the client says `events-lost`:
 * a signed-in page logs in again with the stored token and reloads the newest messages (what it
 * missed); a login the server no longer accepts (the user is gone, the session was revoked) sends
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
