// The files of a generated service: what `npm run generate -- service <name>` writes, in the style of
// src/services/messages (schema, hooks, service) plus a use-case test. Prettier formats them afterwards.
import { camel, pascal, property, singular } from './names.mjs'

/** Everything the templates need, from the name and the options. */
export function serviceNames(name, { collection = name, id = 'number', auth = true, owner = false } = {}) {
  const record = singular(name)
  return {
    name,
    collection,
    id,
    auth,
    owner,
    use: `use${pascal(name)}`,
    hooks: `${camel(name)}Hooks`,
    options: `${pascal(name)}Options`,
    hooksOptions: `${pascal(name)}HooksOptions`,
    type: pascal(record),
    schema: `${camel(record)}Schema`,
    schemas: `${camel(record)}Schemas`,
    property: property(name)
  }
}

export function schemaFile(n) {
  const idLine =
    n.id === 'string'
      ? '/** UUID strings, assigned by the service on create (' +
        `${n.name}.hooks.ts): the same on every store. */\nconst id = { type: 'string', format: 'uuid' } as const`
      : "/** Integers counted by the store (memory). PostgreSQL and RethinkDB generate UUID strings: regenerate with\n * `--id string` to run there. A REST `?id=3` is coerced to 3. */\nconst id = { type: 'integer' } as const"
  const owner = n.owner
    ? "\n/** The owner: a user's id (integers on memory, UUID strings on the database stores). */\nconst userId = { type: ['integer', 'string'] } as const"
    : ''
  const fields = `id, text, ${n.owner ? 'userId, ' : ''}createdAt: timestamp, updatedAt: timestamp`
  return `import type { ServiceSchemas } from '../../domain/schema/json-schema.js'
import type { SchemaType } from '../../domain/schema/schema-type.js'

/*
 * The ${n.name} service's schemas: each field is declared once, here. The TypeScript type of a record
 * derives from them (SchemaType), the \`validateSchemas()\` hook applies them, and GET /openapi.json
 * publishes them. Add your fields to the record, the data and the query.
 */

${idLine}${owner}
const timestamp = { type: 'string', format: 'date-time' } as const
const text = { type: 'string', minLength: 1, maxLength: 2000, transform: ['trim'] } as const

export const ${n.schema} = {
  $id: '${n.type}',
  type: 'object',
  properties: { ${fields} },
  required: ['id', 'text'${n.owner ? ", 'userId'" : ''}, 'createdAt', 'updatedAt'],
  additionalProperties: false
} as const

/** Server-owned fields: declared \`false\`, refused from clients (the server sets them). */
const serverOwned = { id: false, ${n.owner ? 'userId: false, ' : ''}createdAt: false, updatedAt: false } as const

export const ${n.schemas} = {
  result: ${n.schema},
  data: {
    $id: '${n.type}Data',
    type: 'object',
    properties: { text, ...serverOwned },
    required: ['text'],
    additionalProperties: false
  },
  patch: {
    $id: '${n.type}Patch',
    type: 'object',
    properties: { text, ...serverOwned },
    additionalProperties: false
  },
  query: {
    type: 'object',
    properties: { ${fields} },
    additionalProperties: false
  }
} as const satisfies ServiceSchemas

/** One record as the ${n.name} service returns it. */
export type ${n.type} = SchemaType<typeof ${n.schema}>
`
}

export function hooksFile(n) {
  const imports = [
    n.auth && "import { authenticate } from '../../application/authentication/hooks/authenticate.js'",
    n.owner && "import { restrictToOwner } from '../../application/authentication/hooks/restrict-to-owner.js'",
    `import type { ${n.id === 'string' || n.owner ? 'HookContext, ' : ''}HookMap } from '../../application/hook-context.js'`,
    "import { stampTimes } from '../../application/schema/stamp-times.js'",
    "import { validateSchemas } from '../../application/schema/validate-schemas.js'",
    "import type { Clock } from '../../domain/clock.js'"
  ].filter(Boolean)
  const assignId =
    n.id === 'string'
      ? `
/** Before create: the record's id is a UUID (every store keeps an id it is given). */
export function assignId(context: HookContext): void {
  const withId = (item: unknown) => ({ ...(item as object), id: crypto.randomUUID() })
  context.data = Array.isArray(context.data) ? context.data.map(withId) : withId(context.data)
}
`
      : ''
  const recordOwner = n.owner
    ? `
/** Before create/update/patch: the logged-in user is the owner (refused from clients by the schema). */
export function recordOwner(context: HookContext): void {
  const userId = context.params.user?.id
  if (userId === undefined) return
  const stamp = (item: unknown) => ({ ...(item as object), userId })
  context.data = Array.isArray(context.data) ? context.data.map(stamp) : stamp(context.data)
}
`
    : ''
  const authOption = n.auth
    ? `
  /** With the authentication service: every method needs a token${n.owner ? ' and only the owner may change a record' : ''}. */
  authentication: boolean`
    : ''
  const login = n.auth ? "\n  const login = authentication ? [authenticate('jwt')] : []" : ''
  const owner = n.owner
    ? "\n  // Only the owner changes a record (403 otherwise).\n  const owner = authentication ? [restrictToOwner({ ownerField: 'userId' })] : []"
    : ''
  const o = n.owner ? '...owner, ' : ''
  const ownerStamp = n.owner ? 'recordOwner, ' : ''
  const createHooks = [n.id === 'string' && 'assignId', n.owner && 'recordOwner', 'stamp'].filter(Boolean).join(', ')
  return `${imports.join('\n')}

export interface ${n.hooksOptions} {
  /** Stamps createdAt/updatedAt. */
  clock: Clock${authOption}
}
${assignId}${recordOwner}
/** The ${n.name} service's hooks: ${n.auth ? 'log in, ' : ''}validate, then the server sets ${
    n.owner ? 'the owner and ' : ''
  }the timestamps. */
export function ${n.hooks}({ clock${n.auth ? ', authentication' : ''} }: ${n.hooksOptions}): HookMap {${login}${owner}
  const stamp = stampTimes(clock)
  return {
    before: {
      all: [${n.auth ? '...login, ' : ''}validateSchemas()],
      create: [${createHooks}],
      update: [${o}${ownerStamp}stamp],
      patch: [${o}${ownerStamp}stamp]${n.owner ? ',\n      remove: [...owner]' : ''}
    }
  }
}
`
}

export function serviceFile(n) {
  const doc = [
    n.auth ? 'every method needs a token' : 'open to everyone (no login)',
    n.owner && 'the server records the owner, and only the owner may update, patch or remove a record',
    'the server sets the id and the timestamps'
  ].filter(Boolean)
  return `import { AdapterService } from '../../application/adapter-service.js'
import type { App } from '../../application/app.js'
import type { Clock } from '../../domain/clock.js'
import type { StoreFactory } from '../../domain/store/store-factory.js'
import { ${n.hooks} } from './${n.name}.hooks.js'
import { ${n.schemas}, type ${n.type} } from './${n.name}.schema.js'

export interface ${n.options} {
  stores: StoreFactory
  clock: Clock${
    n.auth
      ? `
  /** Whether the app has an authentication service (see ${n.name}.hooks.ts). */
  authentication: boolean`
      : ''
  }
}

/**
 * \`${n.name}\`: ${doc.join(';\n * ')}.
 * Its records live in the store's \`${n.collection}\` collection.
 * Registered on \`app\` with its schemas and hooks; returns the service.
 */
export function ${n.use}(app: App, { stores, clock${n.auth ? ', authentication' : ''} }: ${n.options}): AdapterService<${n.type}> {
  const service = new AdapterService(stores.create<${n.type}>('${n.collection}', { schema: ${n.schemas}.result }), {
    paginate: { default: 10, max: 50 }
  })
  app.use('${n.name}', service, { schemas: ${n.schemas} })
  app.service('${n.name}').hooks(${n.hooks}({ clock${n.auth ? ', authentication' : ''} }))
  return service
}
`
}
