import { ContainerModule } from 'inversify'
import { PasswordHasher } from '../../domain/auth/password-hasher.js'
import { Config } from '../config/config.js'
import { BcryptPasswordHasher } from './bcrypt-password-hasher.js'

/** Passwords hashed with the native bcrypt at the cost BCRYPT_ROUNDS. */
export const bcryptModule = new ContainerModule(({ bind }) => {
  bind<PasswordHasher>(PasswordHasher)
    .toResolvedValue((config: Config) => new BcryptPasswordHasher(config.bcryptRounds), [Config])
    .inSingletonScope()
})
