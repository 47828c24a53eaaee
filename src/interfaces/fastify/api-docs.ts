import type { FastifyInstance, FastifyReply } from 'fastify'
import { apiDocsPaths, queryOf, swaggerUiDirectory, type ApiDocsOptions } from '../http/api-docs-page.js'
import { ASYNCAPI_PAGE_PATH, ASYNCAPI_PATH } from '../http/asyncapi-page.js'

type WithSendFile = FastifyReply & {
  sendFile(path: string, root: string, options: Record<string, unknown>): FastifyReply
}

/**
 * The API docs (src/interfaces/http/api-docs-page.ts) as fastify routes; swagger-ui-dist's assets go
 * through @fastify/static's `reply.sendFile` (registered by the app), from a folder found at the first request.
 */
export async function apiDocsRoutes(http: FastifyInstance, options: ApiDocsOptions): Promise<void> {
  const { specPath, uiPath, init, page: html, asyncApiPage } = apiDocsPaths(options)
  let assets: string | undefined
  http.get(specPath, async (_request, reply) => reply.header('Cache-Control', 'no-cache').send(options.document()))
  http.get(uiPath, async (request, reply) => reply.redirect(`${uiPath}/${queryOf(request.url)}`, 301))
  const page = async (_request: unknown, reply: FastifyReply) =>
    reply.type('text/html; charset=utf-8').header('Cache-Control', 'no-cache').send(html)
  http.get(`${uiPath}/`, page)
  http.get(`${uiPath}/index.html`, page)
  if (options.asyncApi && asyncApiPage) {
    const asyncApi = options.asyncApi
    http.get(ASYNCAPI_PATH, async (_request, reply) => reply.header('Cache-Control', 'no-cache').send(asyncApi()))
    http.get(ASYNCAPI_PAGE_PATH, async (_request, reply) =>
      reply.type('text/html; charset=utf-8').header('Cache-Control', 'no-cache').send(asyncApiPage)
    )
  }
  http.get(`${uiPath}/init.js`, async (_request, reply) => reply.type('text/javascript; charset=utf-8').send(init))
  http.get(`${uiPath}/*`, async (request, reply) => {
    assets ??= swaggerUiDirectory()
    const file = (request.params as { '*': string })['*']
    return (reply as WithSendFile).sendFile(file, assets, { index: false, maxAge: '1h' })
  })
}
