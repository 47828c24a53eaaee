/**
 * The id field a service declares (`AdapterService#id`, as Feathers adapters do); undefined when it
 * declares none. Callers that need a field default to `'id'`, the Feathers default.
 */
export function declaredIdField(service: object): string | undefined {
  const id = (service as { id?: unknown }).id
  return typeof id === 'string' ? id : undefined
}
