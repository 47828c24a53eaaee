import { createFeathersReferenceApp } from './feathers-reference-app.js'

/**
 * The anchor of the cold-start and idle-RSS rows: the reference app built the Feathers v5 way
 * (feathers-reference-app.ts). Listens on 127.0.0.1:$PORT like main.js.
 */
const app = createFeathersReferenceApp()
await app.listen(Number(process.env.PORT ?? 3030), '127.0.0.1')
