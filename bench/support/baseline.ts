import bcrypt from 'bcrypt'
import jwt from 'jsonwebtoken'
import type { Ajv2020 } from 'ajv/dist/2020.js'
import { createRequire } from 'node:module'
import { benchMessageSchemas } from './message-schemas.js'
import { BENCH_SECRET, BENCH_USER } from './auth-setup.js'
import { seedRecords } from './seed.js'

/*
 * What the raw baselines (express-server.ts, fastify-server.ts) answer, without any framework: a Map
 * per collection, just enough query support for the benchmark's workloads, create and patch bodies
 * validated against the messages schemas as plumage validates them, a JWT with Feathers' claims
 * verified and the user looked up on every `secure` call, login with bcrypt 10. Each server only
 * maps its engine's routes onto these functions, so the two floors do the same work.
 */
export type Doc = Record<string, unknown>
type Query = Record<string, unknown>

// CommonJS packages: module.exports is the class / the plugin.
const require = createRequire(import.meta.url)
const Ajv = require('ajv/dist/2020.js') as typeof Ajv2020
const addTransform = require('ajv-keywords/dist/keywords/transform') as (ajv: Ajv2020) => Ajv2020
/** Plumage's Ajv options (src/infrastructure/schema/ajv-schema-validator.ts) and its one extra keyword (trim). */
const ajv = addTransform(new Ajv({ allErrors: true, useDefaults: true, allowUnionTypes: true, strict: true }))
const { $id: _data, ...dataSchema } = benchMessageSchemas.data
const { $id: _patch, ...patchSchema } = benchMessageSchemas.patch
const validators = { data: ajv.compile(dataSchema), patch: ajv.compile(patchSchema) }

/**
 * The 400 for a create (`data`) or patch body the messages schema refuses, or undefined when it is
 * valid; valid bodies are trimmed in place, as the schema's `transform` asks.
 */
export function invalidBody(kind: 'data' | 'patch', body: unknown): Doc | undefined {
  const validate = validators[kind]
  if (validate(body)) return undefined
  return { name: 'BadRequest', message: 'Invalid data', code: 400, className: 'bad-request', data: validate.errors }
}

export class Collection {
  readonly records = new Map<string, Doc>()
  private nextId = 0

  create(data: Doc): Doc {
    const record = { ...data, id: this.nextId++ }
    this.records.set(String(record.id), record)
    return record
  }

  find(query: Query): { total: number; limit: number; skip: number; data: Doc[] } {
    const limit = Math.min(Number(query.$limit ?? 10), 50)
    const skip = Number(query.$skip ?? 0)
    const conditions = Object.entries(query).filter(([key]) => !key.startsWith('$'))
    const matches = [...this.records.values()].filter((record) =>
      conditions.every(([field, condition]) => test(record[field], condition))
    )
    const sort = Object.entries((query.$sort ?? {}) as Record<string, string>)
    if (sort.length > 0) {
      matches.sort((a, b) => {
        for (const [field, direction] of sort) {
          const order = compare(a[field], b[field]) * Number(direction)
          if (order !== 0) return order
        }
        return 0
      })
    }
    return { total: matches.length, limit, skip, data: matches.slice(skip, skip + limit) }
  }

  /** The patched record, or undefined when there is none with this id. */
  patch(id: string, data: Doc): Doc | undefined {
    const record = this.records.get(id)
    return record && Object.assign(record, data, { id: record.id })
  }
}

function test(value: unknown, condition: unknown): boolean {
  if (typeof condition !== 'object' || condition === null) return String(value) === String(condition)
  return Object.entries(condition).every(([operator, operand]) => {
    switch (operator) {
      case '$in':
        return (operand as unknown[]).map(String).includes(String(value))
      case '$nin':
        return !(operand as unknown[]).map(String).includes(String(value))
      case '$ne':
        return String(value) !== String(operand)
      default:
        throw new Error(`The baseline does not implement ${operator}`)
    }
  })
}

function compare(a: unknown, b: unknown): number {
  return a === b ? 0 : (a as string) < (b as string) ? -1 : 1
}

export const messages = new Collection()
export const secure = new Collection()
const users = new Collection()
for (const record of seedRecords()) {
  messages.create(record)
  secure.create(record)
}
users.create({ email: BENCH_USER.email, password: await bcrypt.hash(BENCH_USER.password, 10) })

const withoutPassword = ({ password: _password, ...user }: Doc) => user
const jwtOptions = { audience: 'https://yourdomain.com', issuer: 'feathers', algorithms: ['HS256' as const] }

export const notFound = (id: string) => ({
  name: 'NotFound',
  message: `No record found for id '${id}'`,
  code: 404,
  className: 'not-found'
})
export const NOT_AUTHENTICATED = {
  name: 'NotAuthenticated',
  message: 'Not authenticated',
  code: 401,
  className: 'not-authenticated'
}

/** The user an `Authorization: Bearer` header belongs to (without password), or undefined. */
export function authenticatedUser(authorization: string | undefined): Doc | undefined {
  const [scheme, token] = (authorization ?? '').split(' ')
  if (scheme?.toLowerCase() !== 'bearer' || !token) return undefined
  try {
    const payload = jwt.verify(token, BENCH_SECRET, jwtOptions) as { sub: string }
    const user = users.records.get(payload.sub)
    return user && withoutPassword(user)
  } catch {
    return undefined
  }
}

/** The login result for a local-strategy body, as Feathers answers it, or undefined for bad credentials. */
export async function login(body: unknown): Promise<Doc | undefined> {
  const { email, password } = (body ?? {}) as { email?: string; password?: string }
  const user = [...users.records.values()].find((candidate) => candidate.email === email)
  if (!user || typeof password !== 'string' || !(await bcrypt.compare(password, user.password as string)))
    return undefined
  const accessToken = jwt.sign({}, BENCH_SECRET, {
    header: { typ: 'access', alg: 'HS256' },
    audience: jwtOptions.audience,
    issuer: jwtOptions.issuer,
    subject: String(user.id),
    expiresIn: '1d',
    jwtid: crypto.randomUUID()
  })
  return {
    accessToken,
    authentication: { strategy: 'local', accessToken, payload: jwt.decode(accessToken) },
    user: withoutPassword(user)
  }
}
