import type { HttpExtension } from '../http/http-extension.js'
import { apiDocsRoutes } from './api-docs-routes.js'
import { asyncApiDocument } from './asyncapi-document.js'
import { openApiDocument, type OpenApiOptions } from './openapi-document.js'

/*
 * The API documents and their pages (README "API documentation"), an extension of either engine: the
 * OpenAPI 3.1 document of the app's services and Swagger UI reading it, the AsyncAPI 3.0 document of the
 * socket protocol and its page. Generated from what is registered, on each request.
 */

export { asyncApiDocument } from './asyncapi-document.js'
export { openApiDocument, type OpenApiOptions } from './openapi-document.js'

export interface ApiDocsSettings extends OpenApiOptions {
  /** Where the OpenAPI document is served (default `/openapi.json`). */
  specPath?: string
  /** Where the API reference page is served (default `/docs`). */
  uiPath?: string
}

/**
 * `GET /openapi.json` and the reference page at `/docs`, `GET /asyncapi.json` and its page at `/asyncapi`,
 * for an engine's `extensions`; none of them request-logged.
 */
export function apiDocs(settings: ApiDocsSettings): HttpExtension {
  const { specPath, uiPath, ...document } = settings
  return {
    routes: (app) =>
      apiDocsRoutes({
        document: () => openApiDocument(app, document),
        asyncApi: () => asyncApiDocument(app, document),
        specPath,
        uiPath
      })
  }
}
