import { App } from '../src/application/app.js'
import type { Service } from '../src/domain/service/service.js'
import { InMemoryStoreFactory } from '../src/infrastructure/memory/in-memory-store-factory.js'
import { AjvSchemaValidator } from '../src/infrastructure/schema/ajv-schema-validator.js'
import { useTodos, type TodosService } from './todos/todos.service.js'

// `npm run example -- add-a-service`: examples/todos/ on the memory store, without a transport or a login.
export async function main(): Promise<void> {
  const app = new App<{ todos: TodosService }>({ validator: new AjvSchemaValidator() })
  useTodos(app, { stores: new InMemoryStoreFactory(), authentication: false })
  const todos = app.service('todos')
  // One object in, one record out: the service is not `multi`.
  const { id } = await todos.create({ title: '  Write the docs ' })
  console.log('created', await todos.get(id))
  console.log('patched', await todos.patch(id, { done: true }))
  console.log('updated', await todos.update(id, { title: 'Publish the docs' }))
  // What a REST or socket client may send, and typed calls cannot: the schemas refuse it.
  const asClientsSeeIt = app.service<Service>('todos')
  for (const data of [{ done: true }, { title: 'Tidy up', done: 'yes' }])
    await asClientsSeeIt.create(data).catch((error: Error) => console.log('refused', `${error.name}: ${error.message}`))
  console.log('found', await todos.find())
}
