import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { ASYNCAPI_PAGE_PATH, asyncApiPage } from './asyncapi-page.js'

/*
 * `GET /openapi.json` (the document) and `GET /docs/` (Swagger UI reading it), whatever the engine; with an
 * AsyncAPI document, also `GET /asyncapi.json` and its page `GET /asyncapi` (asyncapi-page.ts).
 * The page and its initialiser are ours (swagger-ui-dist's own index points at a public demo); the
 * bundle, styles and icons come from the swagger-ui-dist package, located at the first request so
 * the server does not pay for it at startup.
 */

export interface ApiDocsOptions {
  /** The OpenAPI document, built on request (services registered later are included). */
  document: () => unknown
  /** Where the document is served (default `/openapi.json`). */
  specPath?: string
  /** Where the API reference page is served (default `/docs`). */
  uiPath?: string
  /**
   * The AsyncAPI document of the real-time transport, built on request: served at `/asyncapi.json`, rendered at
   * `/asyncapi` (asyncapi-page.ts) and linked from the reference page. Left out, neither is served.
   */
  asyncApi?: () => unknown
}

/** The reference page: swagger-ui-dist's assets, served from node_modules (never a CDN). */
const apiDocsPage = (asyncApiHref: string | undefined) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>API reference</title>
  <link rel="stylesheet" href="swagger-ui.css">
  <link rel="icon" type="image/png" href="favicon-32x32.png">
  <style>
    body { margin: 0 }
    /* The link to the real-time API, aligned and lettered like Swagger UI's own header below it. */
    .api-links { background: #fafafa; border-bottom: 1px solid #e8e8e8 }
    .api-links nav { box-sizing: border-box; max-width: 1460px; margin: 0 auto; padding: 10px 20px;
      font: 600 14px/1.4 sans-serif; color: #3b4151 }
    .api-links a { color: #4990e2; text-decoration: none } .api-links a:hover { text-decoration: underline }
  </style>
</head>
<body>
  ${asyncApiHref ? `<header class="api-links"><nav>REST API (OpenAPI) · <a href="${asyncApiHref}">Real-time API (socket.io calls and events, AsyncAPI)</a></nav></header>\n  ` : ''}<div id="swagger-ui"></div>
  <script src="swagger-ui-bundle.js"></script>
  <script src="swagger-ui-standalone-preset.js"></script>
  <script src="init.js"></script>
</body>
</html>
`

export interface ApiDocsPaths {
  specPath: string
  uiPath: string
  /** `init.js`: starts Swagger UI on the document, found relative to the page. */
  init: string
  /** The reference page (`${uiPath}/`). */
  page: string
  /** The AsyncAPI page of a document, when an AsyncAPI document is served. */
  asyncApiPage?: (document: unknown) => string
}

export function apiDocsPaths(options: ApiDocsOptions): ApiDocsPaths {
  const specPath = options.specPath ?? '/openapi.json'
  const uiPath = options.uiPath ?? '/docs'
  const up = '../'.repeat(uiPath.split('/').filter(Boolean).length)
  const relativeSpec = `${up}${specPath.replace(/^\//, '')}`
  const asyncApiHref = options.asyncApi ? `${up}${ASYNCAPI_PAGE_PATH.slice(1)}` : undefined
  return {
    specPath,
    uiPath,
    init: initScript(relativeSpec),
    page: apiDocsPage(asyncApiHref),
    ...(options.asyncApi ? { asyncApiPage: (document) => asyncApiPage(`${uiPath.slice(1)}/`, document) } : {})
  }
}

const initScript = (specPath: string) => `window.ui = SwaggerUIBundle({
  url: new URL(${JSON.stringify(specPath)}, window.location.href).href,
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: false,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout'
})
`

/** The query string of a URL, `?` included ('' when none): the redirect to the page keeps it. */
export function queryOf(url: string): string {
  const mark = url.indexOf('?')
  return mark < 0 ? '' : url.slice(mark)
}

/** swagger-ui-dist's folder in node_modules. */
export function swaggerUiDirectory(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))
}
