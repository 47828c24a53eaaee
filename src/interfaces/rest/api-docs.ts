import express, { type RequestHandler, type Router } from 'express'
import { apiDocsPaths, queryOf, swaggerUiDirectory, type ApiDocsOptions } from '../http/api-docs-page.js'
import { ASYNCAPI_PAGE_PATH, ASYNCAPI_PATH } from '../http/asyncapi-page.js'

/** The API docs (src/interfaces/http/api-docs-page.ts) as an express router. */
export function apiDocs(options: ApiDocsOptions): Router {
  const { specPath, uiPath, init, page: html, asyncApiPage } = apiDocsPaths(options)
  const router = express.Router({ strict: true })
  router.get(specPath, (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache')
    res.json(options.document())
  })
  router.get(uiPath, (req, res) => {
    res.redirect(301, `${uiPath}/${queryOf(req.url)}`)
  })
  const page: RequestHandler = (_req, res) => {
    res.type('html').setHeader('Cache-Control', 'no-cache')
    res.send(html)
  }
  router.get(`${uiPath}/`, page)
  router.get(`${uiPath}/index.html`, page)
  if (options.asyncApi && asyncApiPage) {
    const asyncApi = options.asyncApi
    router.get(ASYNCAPI_PATH, (_req, res) => {
      res.setHeader('Cache-Control', 'no-cache')
      res.json(asyncApi())
    })
    router.get(ASYNCAPI_PAGE_PATH, (_req, res) => {
      res.type('html').setHeader('Cache-Control', 'no-cache')
      res.send(asyncApiPage)
    })
  }
  router.get(`${uiPath}/init.js`, (_req, res) => {
    res.type('js').send(init)
  })
  let assets: RequestHandler | undefined
  router.use(uiPath, (req, res, next) => {
    assets ??= express.static(swaggerUiDirectory(), { index: false, maxAge: '1h' })
    assets(req, res, next)
  })
  return router
}
