import { feathers } from '@feathersjs/feathers'
import expressModule, { errorHandler, json, notFound, rest, urlencoded } from '@feathersjs/express'
import { MemoryService } from '@feathersjs/memory'
import socketio from '@feathersjs/socketio'
import { announce, seedRecords } from './seed.js'
import { addFeathersAuthentication } from './feathers-auth.js'
import { feathersMessageHooks } from './feathers-schemas.js'

/**
 * The anchor: the same service on @feathersjs/express + @feathersjs/memory, set up as a generated app,
 * validating the same schemas as plumage with @feathersjs/schema (feathers-schemas.ts).
 */
// A CommonJS module: its exports object is the function and also carries it as `default`.
const app = expressModule.default(feathers())
app.use(json())
app.use(urlencoded({ extended: true }))
app.configure(rest())
app.configure(socketio())
app.use('messages', new MemoryService({ paginate: { default: 10, max: 50 }, multi: ['patch', 'remove'] }))
app.service('messages').hooks({ before: feathersMessageHooks as never })
await addFeathersAuthentication(app)
app.use(notFound())
app.use(errorHandler({ logger: false }))
for (const record of seedRecords()) await app.service('messages').create(record)
const server = await app.listen(0, '127.0.0.1')
if (!server.listening) await new Promise((resolve) => server.once('listening', resolve))
announce((server.address() as { port: number }).port)
