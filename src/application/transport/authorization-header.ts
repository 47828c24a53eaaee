import type { AuthenticationRequest } from '../../domain/service/service.js'

const SCHEME_AND_VALUE = /(\S+)\s+(\S+)/
const JWT_SCHEMES = /^(bearer|jwt)$/i

/**
 * docs/wire-protocol.md, Authorization header: `Bearer <t>` / `JWT <t>` (any case) or a raw token become
 * `{ strategy: 'jwt', accessToken }`; other schemes (Basic, …) are ignored. Nothing is verified
 * here: only an authenticate hook decides whether the token is good.
 */
export function parseAuthorization(header: string | string[] | undefined): AuthenticationRequest | undefined {
  if (typeof header !== 'string' || header.length === 0) return undefined
  const [, scheme, value] = SCHEME_AND_VALUE.exec(header) ?? []
  if (scheme === undefined) return { strategy: 'jwt', accessToken: header.trim() }
  return JWT_SCHEMES.test(scheme) ? { strategy: 'jwt', accessToken: value! } : undefined
}
