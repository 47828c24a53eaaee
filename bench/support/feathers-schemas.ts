import {
  Ajv,
  addFormats,
  getValidator,
  hooks as schemaHooks,
  querySyntax,
  type FormatsPluginOptions
} from '@feathersjs/schema'
import type { HookContext } from '@feathersjs/feathers'
import { createRequire } from 'node:module'
import { messageSchema } from '../../src/services/messages/messages.schema.js'
import { benchMessageSchemas } from './message-schemas.js'

/*
 * The schemas of plumage's reference `messages`, validated the way a generated Feathers v5 app does
 * (src/schemas/validators.ts + the service's hooks): @feathersjs/schema's Ajv with ajv-formats, a data
 * validator and a query validator with `coerceTypes`, `querySyntax` for the query, and
 * schemaHooks.validateQuery / validateData. ajv-keywords adds `transform` (trim), which plumage's
 * schema uses; without it Feathers' Ajv would refuse the schema.
 */
const formats: FormatsPluginOptions = [
  'date-time',
  'time',
  'date',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uri',
  'uri-reference',
  'uuid',
  'uri-template',
  'json-pointer',
  'relative-json-pointer',
  'regex'
]
const ajvKeywords = createRequire(import.meta.url)('ajv-keywords') as (ajv: Ajv, keywords: string[]) => Ajv
const dataValidator: Ajv = ajvKeywords(addFormats(new Ajv({ allowUnionTypes: true }), formats), ['transform'])
const queryValidator: Ajv = ajvKeywords(addFormats(new Ajv({ coerceTypes: true, allowUnionTypes: true }), formats), [
  'transform'
])

// The bench's records also carry user, room and stars (strings): declared so querySyntax allows them.
const queryProperties = {
  ...messageSchema.properties,
  user: { type: 'string' },
  room: { type: 'string' },
  stars: { type: 'string' }
} as const
const messageQuerySchema = {
  $id: 'MessageQuery',
  type: 'object',
  additionalProperties: false,
  properties: { ...querySyntax(queryProperties) }
} as const

const validateData = getValidator({ ...benchMessageSchemas.data, $id: 'BenchMessageData' } as never, dataValidator)
const validatePatch = getValidator({ ...benchMessageSchemas.patch, $id: 'BenchMessagePatch' } as never, dataValidator)
const validateQuery = getValidator(messageQuerySchema as never, queryValidator)

type Hook = (context: HookContext, next?: () => Promise<void>) => Promise<unknown>

/** The before hooks a generated app registers on a schema-backed service. */
export const feathersMessageHooks: { all: Hook[]; create: Hook[]; update: Hook[]; patch: Hook[] } = {
  // skipSanitize: false keeps the adapter's own query filtering after validation: with the default
  // (true) @feathersjs/memory 5.0.50 skips it and with it the default page size, so every find would
  // return all 1000 records — slower, and not what the bench compares.
  all: [schemaHooks.validateQuery(validateQuery, { skipSanitize: false }) as Hook],
  create: [schemaHooks.validateData(validateData) as Hook],
  update: [schemaHooks.validateData(validateData) as Hook],
  patch: [schemaHooks.validateData(validatePatch) as Hook]
}
