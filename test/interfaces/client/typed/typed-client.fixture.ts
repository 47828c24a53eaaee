/*
 * Type tests of the typed client, checked by the compiler only (typed-client.test.ts runs tsc on this
 * file; `npm run typecheck` checks it too). Each `// @ts-expect-error` line must fail to compile — tsc
 * reports an unused one — and each `typeOf(value).is<T>(true)` holds only when the value's type is exactly T.
 */
import type { ServiceSchemas } from '../../../../src/domain/schema/json-schema.js'
import type { SchemaType } from '../../../../src/domain/schema/schema-type.js'
import type { CursorPage, Paginated } from '../../../../src/domain/service/service.js'
import { createClient } from '../../../../src/interfaces/client/client-app.js'
import type { SchemaTypes } from '../../../../src/interfaces/client/schema-types.js'
import type { Message, Services, User } from '../../../../src/reference-services.js'

/** True only when A and B are the same type (not merely assignable either way). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
/** `typeOf(value).is<T>(true)` compiles only when the value's type is exactly T. */
const typeOf = <V>(value: V) => ({ is: <T>(same: Same<V, T>) => [value, same] })

/** The reference app's services, from the schemas the server registers them with. */
export async function referenceServices() {
  const client = createClient<Services>()
  const messages = client.service('messages')
  const users = client.service('users')

  // Results: find answers pages (both services paginate), create one record or an array.
  const page = await messages.find({ query: { $limit: 5, $sort: { id: -1 }, userId: { $in: [1, 2] } } })
  typeOf(page).is<Paginated<Message>>(true)
  const one = await messages.create({ text: 'hi' })
  typeOf(one).is<Message>(true)
  const many = await messages.create([{ text: 'a' }, { text: 'b' }])
  typeOf(many).is<Message[]>(true)
  const removed = await messages.remove(null, { query: { userId: 3 } })
  typeOf(removed).is<Message[]>(true)
  const user = await users.get(1)
  typeOf(user).is<User>(true)
  const text: string = (await messages.patch(1, { text: 'edited' })).text
  const email: string = (await users.find()).data[0]!.email
  // The author a resolver adds (a virtual property of the result schema) is typed, avatar included.
  typeOf(one.user).is<User | undefined>(true)
  typeOf(user.avatar).is<string | undefined>(true)
  // @ts-expect-error `user` is resolved by the server (declared false in the data schema)
  await messages.create({ text: 'hi', user: { id: 1, email: 'ann@example.com' } })

  // Data: required fields, types and server-owned fields come from the data schema.
  // @ts-expect-error a user's data has no `isAdmin` (additionalProperties: false)
  await users.create({ email: 'ann@example.com', password: 'secret-pw', isAdmin: true })
  // @ts-expect-error a role is one of the schema's (only an admin may set one: users.rules.ts)
  await users.create({ email: 'ann@example.com', password: 'secret-pw', role: 'root' })
  typeOf(await messages.create({ text: 'psst', to: 2 })).is<Message>(true)
  // @ts-expect-error `password` is required
  await users.create({ email: 'ann@example.com' })
  // @ts-expect-error `text` is a string
  await messages.create({ text: 42 })
  // @ts-expect-error `userId` is server-owned (declared false)
  await messages.create({ text: 'hi', userId: 7 })
  // @ts-expect-error patch data is checked too
  await users.patch(1, { email: 3 })

  // Query: the query schema's fields, their operators, and the $ parameters.
  // @ts-expect-error users' query names only id, email and name
  await users.find({ query: { password: 'guess' } })
  // @ts-expect-error an operator's values have the field's type
  await users.find({ query: { email: { $in: [1] } } })
  // @ts-expect-error $sort takes 1 or -1
  await users.find({ query: { $sort: { email: 'asc' } } })
  // @ts-expect-error $select names fields of the record
  await users.find({ query: { $select: ['password'] } })
  // @ts-expect-error $limit is a number
  await messages.find({ query: { $limit: '5' } })

  // Cursors: a query naming $after, $before or $count answers a cursor page; iterate yields records.
  const first = await users.find({ query: { $after: '', $limit: 20, $sort: { email: 1 } } })
  typeOf(first).is<CursorPage<User>>(true)
  const previous = await messages.find({ query: { $before: first.prev ?? '', userId: 3 } })
  typeOf(previous).is<CursorPage<Message>>(true)
  typeOf(await users.find({ query: { $count: false } })).is<CursorPage<User>>(true)
  for await (const message of messages.iterate({ $sort: { id: -1 }, userId: { $in: [1, 2] } })) {
    typeOf(message).is<Message>(true)
  }
  // @ts-expect-error $after is a cursor string (a page's `next`)
  await users.find({ query: { $after: 3 } })
  // @ts-expect-error $count is a boolean
  await messages.find({ query: { $count: 'no' } })
  // @ts-expect-error iterate's query is checked like find's (users' query names only id, email and name)
  users.iterate({ password: 'guess' })

  // Events carry the record.
  messages.on('created', (message) => {
    typeOf(message).is<Message>(true)
  })
  users.once('removed', (removedUser) => removedUser.email)
  // @ts-expect-error not an event of the service
  messages.on('creatd', () => {})
  // @ts-expect-error the payload is a Message, not a User
  messages.on('patched', (message: User) => message)

  // Paths not in the map stay untyped, as with createClient().
  const other = await client.service('other').find()
  typeOf(other).is<Record<string, unknown>[] | Paginated<Record<string, unknown>>>(true)
  // @ts-expect-error every entry of the map is a service's types (a `result` at least)
  createClient<{ messages: { text: string } }>()
  return { text, email }
}

/** A service of the app's own, as in examples/todos/todos.service.ts: its schemas, as the server registers them. */
const todo = {
  type: 'object',
  properties: { id: { type: 'integer' }, title: { type: 'string' }, done: { type: 'boolean' } },
  required: ['id', 'title', 'done'],
  additionalProperties: false
} as const
export const todoSchemas = {
  result: todo,
  data: { ...todo, properties: { ...todo.properties, id: false }, required: ['title'] },
  query: todo
} as const satisfies ServiceSchemas
type Todo = SchemaType<typeof todo>

/** With a custom method and a custom event, not paginated. */
type TodoServices = {
  todos: SchemaTypes<
    typeof todoSchemas,
    {
      paginate: false
      methods: { archive(data: { before: string }): Promise<Todo[]> }
      events: { archived: { count: number } }
    }
  >
}

export async function customMethodsAndEvents() {
  const todos = createClient<TodoServices>().service('todos').methods('archive')
  const archived = await todos.archive({ before: '2026-01-01' }, { headers: { 'x-trace': '1' } })
  typeOf(archived).is<Todo[]>(true)
  const all = await todos.find({ query: { done: false } })
  typeOf(all).is<Todo[]>(true)
  todos.on('archived', ({ count }) => {
    typeOf(count).is<number>(true)
  })
  // Without a patch schema, patch takes some of the data's fields.
  typeOf(await todos.patch(1, { done: true })).is<Todo>(true)
  // @ts-expect-error `done` is a boolean
  await todos.patch(1, { done: 'yes' })
  // @ts-expect-error archive's data is { before: string }
  await todos.archive({ after: '2026-01-01' })
  // @ts-expect-error only declared custom methods
  createClient<TodoServices>().service('todos').methods('purge')
  // @ts-expect-error `id` is the server's (false in the data schema)
  await todos.create({ id: 3, title: 'x' })
  // @ts-expect-error `done` is a boolean, in queries too
  await todos.find({ query: { done: 'yes' } })
  // @ts-expect-error cursors page a find: a service that answers arrays takes none
  await todos.find({ query: { $after: '' } })
}

/** SchemaType reads each keyword plumage's schemas use (src/domain/schema/schema-type.ts). */
export const everyKeyword = {
  type: 'object',
  properties: {
    kind: { type: 'string', enum: ['a', 'b'] },
    one: { const: 1 },
    either: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
    maybe: { type: ['string', 'null'], format: 'date-time' },
    legacy: { type: 'number', nullable: true },
    tags: { type: 'array', items: { type: 'string' } },
    list: { type: 'array' },
    flags: { type: 'object', additionalProperties: { type: 'boolean' } },
    open: { type: 'object' },
    owned: false,
    any: true
  },
  required: ['kind', 'tags'],
  additionalProperties: false
} as const

export function schemaKeywords(record: SchemaType<typeof everyKeyword>) {
  typeOf(record.kind).is<'a' | 'b'>(true)
  typeOf(record.one).is<1 | undefined>(true)
  typeOf(record.either).is<string | number | undefined>(true)
  typeOf(record.maybe).is<string | null | undefined>(true)
  typeOf(record.legacy).is<number | null | undefined>(true)
  typeOf(record.tags).is<string[]>(true)
  typeOf(record.list).is<unknown[] | undefined>(true)
  typeOf(record.flags).is<{ [field: string]: boolean } | undefined>(true)
  typeOf(record.open).is<{ [field: string]: unknown } | undefined>(true)
  typeOf(record.owned).is<undefined>(true)
  typeOf(record.any).is<unknown>(true)
  // @ts-expect-error additionalProperties: false closes the object
  typeOf(record.other)
  // @ts-expect-error `tags` is required
  const partial: SchemaType<typeof everyKeyword> = { kind: 'a' }
  return partial
}
