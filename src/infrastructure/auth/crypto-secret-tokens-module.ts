import { ContainerModule } from 'inversify'
import { SecretTokens } from '../../domain/auth/secret-tokens.js'
import { CryptoSecretTokens } from './crypto-secret-tokens.js'

/** Refresh tokens and session ids from node:crypto. */
export const cryptoSecretTokensModule = new ContainerModule(({ bind }) => {
  bind<SecretTokens>(SecretTokens).to(CryptoSecretTokens).inSingletonScope()
})
