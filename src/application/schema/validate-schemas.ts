import { MethodNotAllowed } from '../../domain/errors/errors.js'
import { coerceQuery } from '../../domain/schema/coerce-query.js'
import type { SchemaIssue } from '../../domain/schema/json-schema.js'
import type { Validate } from '../../domain/schema/schema-validator.js'
import { validationError } from '../../domain/schema/validation-error.js'
import type { Params } from '../../domain/service/service.js'
import type { Hook, HookContext } from '../hook-context.js'
import type { BodyValidators } from './compile-schemas.js'
import { declaredIdField } from '../id-field.js'

/**
 * Before hook: applies the schemas the service was registered with (`app.use(path, service,
 * { schemas })`) — `params.query` is coerced to the query schema's types, create/update data is
 * checked against `data`, patch data against `patch`. Failures are one 400 listing every failing
 * field. Data is copied before `transform`s and `default`s change it, so a caller's object is never
 * modified. Register it after `authenticate` (a stranger learns nothing about the schema) and before
 * hooks that rely on valid data (`hashPassword` must see the plain password to check its length).
 */
export function validateSchemas(): Hook {
  return (context: HookContext) => {
    const compiled = context.app.schemasOf(context.path)
    if (!compiled) throw new Error(`validateSchemas on '${context.path}': the service was registered without schemas`)
    const { params } = context
    // An empty query (every get, patch and create without one) has nothing to coerce: params are not copied for it.
    if (compiled.query && params.query !== undefined && !isEmpty(params.query)) {
      context.params = {
        ...params,
        query: coerceQuery(params.query, compiled.query, declaredIdField(context.service)) as Record<string, unknown>
      }
    }
    const validators =
      context.method === 'create' || context.method === 'update'
        ? compiled.data
        : context.method === 'patch'
          ? compiled.patch
          : undefined
    if (validators && context.data !== undefined) context.data = checkData(context, validators)
  }
}

function checkData(context: HookContext, validators: BodyValidators): unknown {
  const validate: Validate = context.params.provider === undefined ? validators.internal : validators.external
  const issues: SchemaIssue[] = []
  const one = (item: unknown, prefix: string) => {
    const copy = typeof item === 'object' && item !== null && !Array.isArray(item) ? { ...item } : item
    for (const issue of validate(copy)) {
      issues.push(
        prefix === ''
          ? issue
          : {
              ...issue,
              field: issue.field === '' ? prefix.slice(0, -1) : prefix + issue.field,
              message: `item ${prefix.slice(0, -1)}: ${issue.message}`
            }
      )
    }
    return copy
  }
  const { data } = context
  // An array on a service that cannot create several records: the 405 says more than item errors would.
  const allowsMulti = (context.service as { allowsMulti?: (method: 'create', params: Params) => boolean }).allowsMulti
  if (
    Array.isArray(data) &&
    context.method === 'create' &&
    allowsMulti &&
    !allowsMulti.call(context.service, 'create', context.params)
  ) {
    throw new MethodNotAllowed('Can not create multiple entries')
  }
  const checked =
    Array.isArray(data) && context.method === 'create'
      ? data.map((item, index) => one(item, `${index}.`))
      : one(data, '')
  if (issues.length > 0) throw validationError('data', issues)
  return checked
}

function isEmpty(query: object): boolean {
  for (const key in query) if (Object.hasOwn(query, key)) return false
  return true
}
