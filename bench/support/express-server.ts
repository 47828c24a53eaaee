import bcrypt from 'bcrypt'
import express, { type NextFunction, type Request, type Response } from 'express'
import jwt from 'jsonwebtoken'
import { BENCH_SECRET, BENCH_USER, SECURE_PATH } from './auth-setup.js'
import { announce, seedRecords } from './seed.js'

/**
 * The floor: plain express 5 and a Map per collection answering the same routes with the same JSON
 * as plumage and Feathers (pagination envelope, 201 on create, login with bcrypt 10 and a JWT with
 * Feathers' claims, the token verified and the user looked up on every `secure` call). No hooks, no
 * framework; just enough query support for the benchmark's workloads.
 */
type Doc = Record<string, unknown>
type Query = Record<string, unknown>

class Collection {
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
    const matches = [...this.records.values()].filter((record) => conditions.every(([field, condition]) => test(record[field], condition)))
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
}

function test(value: unknown, condition: unknown): boolean {
  if (typeof condition !== 'object' || condition === null) return String(value) === String(condition)
  return Object.entries(condition).every(([operator, operand]) => {
    switch (operator) {
      case '$in': return (operand as unknown[]).map(String).includes(String(value))
      case '$nin': return !(operand as unknown[]).map(String).includes(String(value))
      case '$ne': return String(value) !== String(operand)
      default: throw new Error(`The baseline does not implement ${operator}`)
    }
  })
}

function compare(a: unknown, b: unknown): number {
  return a === b ? 0 : (a as string) < (b as string) ? -1 : 1
}

const messages = new Collection()
const secure = new Collection()
const users = new Collection()
for (const record of seedRecords()) {
  messages.create(record)
  secure.create(record)
}
users.create({ email: BENCH_USER.email, password: await bcrypt.hash(BENCH_USER.password, 10) })

const withoutPassword = ({ password: _password, ...user }: Doc) => user
const jwtOptions = { audience: 'https://yourdomain.com', issuer: 'feathers', algorithms: ['HS256' as const] }

function notFound(res: Response, id: string): void {
  res.status(404).json({ name: 'NotFound', message: `No record found for id '${id}'`, code: 404, className: 'not-found' })
}

function notAuthenticated(res: Response): void {
  res.status(401).json({ name: 'NotAuthenticated', message: 'Not authenticated', code: 401, className: 'not-authenticated' })
}

function authenticate(req: Request, res: Response, next: NextFunction): void {
  const [scheme, token] = (req.headers.authorization ?? '').split(' ')
  if (scheme?.toLowerCase() !== 'bearer' || !token) return notAuthenticated(res)
  try {
    const payload = jwt.verify(token, BENCH_SECRET, jwtOptions) as { sub: string }
    const user = users.records.get(payload.sub)
    if (!user) return notAuthenticated(res)
    res.locals.user = withoutPassword(user)
    next()
  } catch {
    notAuthenticated(res)
  }
}

function routes(path: string, collection: Collection, ...guard: ((req: Request, res: Response, next: NextFunction) => void)[]): void {
  app.get(`/${path}`, ...guard, (req, res) => { res.json(collection.find(req.query as Query)) })
  app.get(`/${path}/:id`, ...guard, (req, res) => {
    const record = collection.records.get(req.params.id as string)
    if (record) res.json(record)
    else notFound(res, req.params.id as string)
  })
  app.post(`/${path}`, ...guard, (req, res) => { res.status(201).json(collection.create(req.body as Doc)) })
  app.patch(`/${path}/:id`, ...guard, (req, res) => {
    const record = collection.records.get(req.params.id as string)
    if (record) res.json(Object.assign(record, req.body as Doc, { id: record.id }))
    else notFound(res, req.params.id as string)
  })
}

const app = express()
app.disable('x-powered-by')
app.set('query parser', 'extended')
app.use(express.json())
routes('messages', messages)
routes(SECURE_PATH, secure, authenticate)
app.post('/authentication', async (req, res) => {
  const { email, password } = req.body as { email?: string; password?: string }
  const user = [...users.records.values()].find((candidate) => candidate.email === email)
  if (!user || typeof password !== 'string' || !(await bcrypt.compare(password, user.password as string))) return notAuthenticated(res)
  const accessToken = jwt.sign({}, BENCH_SECRET, {
    header: { typ: 'access', alg: 'HS256' }, audience: jwtOptions.audience, issuer: jwtOptions.issuer,
    subject: String(user.id), expiresIn: '1d', jwtid: crypto.randomUUID()
  })
  res.status(201).json({
    accessToken,
    authentication: { strategy: 'local', accessToken, payload: jwt.decode(accessToken) },
    user: withoutPassword(user)
  })
})
const server = app.listen(0, '127.0.0.1', () => announce((server.address() as { port: number }).port))
