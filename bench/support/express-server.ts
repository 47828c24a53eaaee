import express, { type NextFunction, type Request, type Response } from 'express'
import { SECURE_PATH } from './auth-setup.js'
import {
  authenticatedUser,
  invalidBody,
  login,
  messages,
  NOT_AUTHENTICATED,
  notFound,
  secure,
  type Collection,
  type Doc
} from './baseline.js'
import { announce } from './seed.js'

/**
 * The express floor: plain express 5 answering the same routes with the same JSON as plumage and
 * Feathers (pagination envelope, 201 on create, login with bcrypt 10 and a JWT with Feathers' claims,
 * the token verified and the user looked up on every `secure` call): baseline.ts, no framework.
 */
function authenticate(req: Request, res: Response, next: NextFunction): void {
  const user = authenticatedUser(req.headers.authorization)
  if (!user) {
    res.status(401).json(NOT_AUTHENTICATED)
    return
  }
  res.locals.user = user
  next()
}

function routes(
  path: string,
  collection: Collection,
  ...guard: ((req: Request, res: Response, next: NextFunction) => void)[]
): void {
  app.get(`/${path}`, ...guard, (req, res) => {
    res.json(collection.find(req.query as Doc))
  })
  app.get(`/${path}/:id`, ...guard, (req, res) => {
    const record = collection.records.get(req.params.id as string)
    if (record) res.json(record)
    else res.status(404).json(notFound(req.params.id as string))
  })
  app.post(`/${path}`, ...guard, (req, res) => {
    const invalid = invalidBody('data', req.body)
    if (invalid) res.status(400).json(invalid)
    else res.status(201).json(collection.create(req.body as Doc))
  })
  app.patch(`/${path}/:id`, ...guard, (req, res) => {
    const invalid = invalidBody('patch', req.body)
    if (invalid) return void res.status(400).json(invalid)
    const record = collection.patch(req.params.id as string, req.body as Doc)
    if (record) res.json(record)
    else res.status(404).json(notFound(req.params.id as string))
  })
}

const app = express()
app.disable('x-powered-by')
app.set('query parser', 'extended')
app.use(express.json())
routes('messages', messages)
routes(SECURE_PATH, secure, authenticate)
app.post('/authentication', async (req, res) => {
  const result = await login(req.body)
  if (result) res.status(201).json(result)
  else res.status(401).json(NOT_AUTHENTICATED)
})
const server = app.listen(0, '127.0.0.1', () => announce((server.address() as { port: number }).port))
