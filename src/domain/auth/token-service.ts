export interface TokenPayload {
  sub?: string
  iat?: number
  exp?: number
  aud?: string | string[]
  iss?: string
  jti?: string
  [claim: string]: unknown
}

export interface SignOptions {
  subject?: string
}

/** Signs and verifies access tokens (JWT). Verification failures throw NotAuthenticated. */
export interface TokenService {
  sign(payload: TokenPayload, options?: SignOptions): Promise<string>
  verify(token: string): Promise<TokenPayload>
}
export const TokenService = Symbol.for('TokenService')
