/*
 * The app's services, one line each: the path is the export's name, the value the function that registers the
 * service (its store, schemas and hooks) on the app and returns it, given what src/services/service-deps.ts
 * lists. createReferenceApp registers them in the order of their paths, and types `app.service(path)` from
 * their return types. `npm run generate -- service <name>` adds a line here (and one to the typed-client map,
 * src/reference-services.ts); deleting a service is deleting its folder and those two lines.
 */
export { useMessages as messages } from './messages/messages.service.js'
export { useUsers as users } from './users/users.service.js'
