import express, { type RequestHandler, type Router } from 'express'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'

export interface ApiDocsOptions {
  /** The OpenAPI document, built on request (services registered later are included). */
  document: () => unknown
  /** Where the document is served (default `/openapi.json`). */
  specPath?: string
  /** Where the API reference page is served (default `/docs`). */
  uiPath?: string
}

/** The reference page: swagger-ui-dist's assets, served from node_modules (never a CDN). */
const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>API reference</title>
  <link rel="stylesheet" href="swagger-ui.css">
  <link rel="icon" type="image/png" href="favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="swagger-ui-bundle.js"></script>
  <script src="swagger-ui-standalone-preset.js"></script>
  <script src="init.js"></script>
</body>
</html>
`

const init = (specPath: string) => `window.ui = SwaggerUIBundle({
  url: new URL(${JSON.stringify(specPath)}, window.location.href).href,
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: false,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout'
})
`

/**
 * `GET /openapi.json` (the document) and `GET /docs/` (Swagger UI reading it). The page and its
 * initialiser are ours (swagger-ui-dist's own index points at a public demo); the bundle, styles and
 * icons come from the swagger-ui-dist package, located at the first request so the server does not
 * pay for it at startup.
 */
export function apiDocs(options: ApiDocsOptions): Router {
  const specPath = options.specPath ?? '/openapi.json'
  const uiPath = options.uiPath ?? '/docs'
  const router = express.Router({ strict: true })
  router.get(specPath, (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache')
    res.json(options.document())
  })
  router.get(uiPath, (req, res) => {
    const query = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : ''
    res.redirect(301, `${uiPath}/${query}`)
  })
  const relativeSpec = `${'../'.repeat(uiPath.split('/').filter(Boolean).length)}${specPath.replace(/^\//, '')}`
  const page: RequestHandler = (_req, res) => {
    res.type('html').setHeader('Cache-Control', 'no-cache')
    res.send(PAGE)
  }
  router.get(`${uiPath}/`, page)
  router.get(`${uiPath}/index.html`, page)
  router.get(`${uiPath}/init.js`, (_req, res) => {
    res.type('js').send(init(relativeSpec))
  })
  let assets: RequestHandler | undefined
  router.use(uiPath, (req, res, next) => {
    assets ??= express.static(swaggerUiDirectory(), { index: false, maxAge: '1h' })
    assets(req, res, next)
  })
  return router
}

function swaggerUiDirectory(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))
}
