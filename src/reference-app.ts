import { AdapterService } from './application/adapter-service.js'
import { App } from './application/app.js'
import type { StoreFactory } from './domain/store/store-factory.js'

export interface ReferenceAppDeps {
  stores: StoreFactory
}

/**
 * The reference application people clone: a `messages` and a `users` service on whichever store the
 * composition root bound. Transports and authentication are added around it in src/container.ts.
 */
export function createReferenceApp({ stores }: ReferenceAppDeps): App {
  const app = new App()
  app.use('messages', new AdapterService(stores.create('messages'), {
    paginate: { default: 10, max: 50 },
    multi: ['patch', 'remove']
  }))
  app.use('users', new AdapterService(stores.create('users'), {
    paginate: { default: 10, max: 50 }
  }))
  return app
}
