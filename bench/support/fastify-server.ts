import { fastify, type FastifyReply, type FastifyRequest } from 'fastify'
import qs from 'qs'
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
 * The fastify floor: plain fastify 5 answering the same routes with the same JSON as the express
 * floor (baseline.ts, no framework), with qs for the bracket queries as the express floor's
 * 'extended' query parser, and fastify's own JSON body parser and serializer.
 */
type Params = { id: string }

async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (!authenticatedUser(request.headers.authorization)) await reply.code(401).send(NOT_AUTHENTICATED)
}

function routes(path: string, collection: Collection, guard?: typeof authenticate): void {
  const options = guard ? { preHandler: guard } : {}
  app.get(`/${path}`, options, async (request) => collection.find(request.query as Doc))
  app.get<{ Params: Params }>(`/${path}/:id`, options, async (request, reply) => {
    const record = collection.records.get(request.params.id)
    return record ?? reply.code(404).send(notFound(request.params.id))
  })
  app.post(`/${path}`, options, async (request, reply) => {
    const invalid = invalidBody('data', request.body)
    return invalid ? reply.code(400).send(invalid) : reply.code(201).send(collection.create(request.body as Doc))
  })
  app.patch<{ Params: Params }>(`/${path}/:id`, options, async (request, reply) => {
    const invalid = invalidBody('patch', request.body)
    if (invalid) return reply.code(400).send(invalid)
    return collection.patch(request.params.id, request.body as Doc) ?? reply.code(404).send(notFound(request.params.id))
  })
}

const app = fastify({ routerOptions: { querystringParser: (search) => qs.parse(search) } })
routes('messages', messages)
routes(SECURE_PATH, secure, authenticate)
app.post('/authentication', async (request, reply) => {
  const result = await login(request.body)
  return result ? reply.code(201).send(result) : reply.code(401).send(NOT_AUTHENTICATED)
})
await app.listen({ port: 0, host: '127.0.0.1' })
announce((app.server.address() as { port: number }).port)
// Exit normally on SIGTERM so `node --cpu-prof` writes its profile.
process.once('SIGTERM', () => process.exit(0))
