import type { App } from '../application/app.js'
import * as registered from './index.js'
import type { ServiceDeps } from './service-deps.js'

/** Registers a service on the app and returns it (its type is the app's `app.service(path)`). */
export type UseService = (app: App, deps: ServiceDeps) => object

/** The registry of src/services/index.ts by path; a line whose function does not fit `UseService` fails to compile. */
export const services: Readonly<Record<string, UseService>> = registered

/** The services by path, as the app types them. */
export type RegisteredServices = { [Path in keyof typeof registered]: ReturnType<(typeof registered)[Path]> }
