import { apiDocs } from '../interfaces/api-docs/index.js'
import { packageVersion } from '../package-version.js'
import type { PlumageModule } from './module.js'

const DESCRIPTION =
  "The reference chat: sign up with POST /users, log in with POST /authentication, then send the accessToken as a bearer token. Errors use Feathers' JSON shape."

/**
 * API_DOCS=true (the default): the OpenAPI 3.1 document of the services at /openapi.json with its reference page
 * at /docs, and the AsyncAPI 3.0 document of the socket protocol at /asyncapi.json with its page at /asyncapi.
 */
export const module: PlumageModule = {
  http: () => apiDocs({ title: 'plumage', version: packageVersion(), description: DESCRIPTION })
}
