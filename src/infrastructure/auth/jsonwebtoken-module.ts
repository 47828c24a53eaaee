import { randomBytes } from 'node:crypto'
import { ContainerModule } from 'inversify'
import { TokenService } from '../../domain/auth/token-service.js'
import { Logger } from '../../domain/logger.js'
import { Config } from '../config/config.js'
import { JsonWebTokenService, JsonWebTokenSettings } from './json-web-token-service.js'

/**
 * Access tokens with jsonwebtoken: the secret and lifetime come from AUTH_SECRET and JWT_EXPIRES_IN;
 * the service also takes the Clock the root binds.
 */
export const jsonWebTokenModule = new ContainerModule(({ bind }) => {
  bind<JsonWebTokenSettings>(JsonWebTokenSettings)
    .toResolvedValue(
      (config: Config, logger: Logger) => ({
        secret: config.authSecret ?? developmentSecret(logger),
        expiresIn: config.jwtExpiresIn
      }),
      [Config, Logger]
    )
    .inSingletonScope()
  bind<TokenService>(TokenService).to(JsonWebTokenService).inSingletonScope()
})

/** Without AUTH_SECRET (development and test only: config refuses production) tokens die with the process. */
function developmentSecret(logger: Logger): string {
  logger.warn(
    'AUTH_SECRET is not set: using a random secret for this run, so access tokens stop working after a restart'
  )
  return randomBytes(32).toString('base64url')
}
