// Names the generator derives from a kebab-case name, and the refusals of a name that cannot be one.

/** A refusal: one line for the user, exit code 1. */
export class Refusal extends Error {}

const kebab = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/

/**
 * Paths the server or the project already uses: the authentication service, the HTTP routes beside the
 * services, the registry's own files in src/services, and names an export cannot take.
 */
export const reserved = new Set([
  'authentication',
  'health',
  'docs',
  'openapi',
  'asyncapi',
  'metrics',
  'socket-io',
  'hooks',
  'index',
  'registry',
  'service-deps',
  'default'
])

/** `todo-items` → `todoItems`. */
export const camel = (name) => name.replace(/-([a-z0-9])/g, (_, letter) => letter.toUpperCase())

/** `todo-items` → `TodoItems`. */
export const pascal = (name) => camel(name).replace(/^[a-z]/, (letter) => letter.toUpperCase())

/** The record's name: `todos` → `todo`, `categories` → `category`; a name with no plural form gets `Record`. */
export function singular(name) {
  const single = name.endsWith('ies')
    ? `${name.slice(0, -3)}y`
    : name.endsWith('s') && !/(ss|us|is)$/.test(name)
      ? name.slice(0, -1)
      : name
  return single === name ? `${name}-record` : single
}

/** Refuses a name that is not kebab-case or is reserved. */
export function checkName(kind, name) {
  if (name === undefined) throw new Refusal(`generate ${kind}: give a name, e.g. npm run generate -- ${kind} todos`)
  if (!kebab.test(name))
    throw new Refusal(
      `'${name}' is not a kebab-case name (lower-case letters, digits and single dashes, e.g. todo-items)`
    )
  if (reserved.has(name)) throw new Refusal(`'${name}' is reserved (${[...reserved].join(', ')}): choose another name`)
}

/** A property name as TypeScript writes it: `todos`, `'todo-items'`. */
export const property = (name) => (/^[a-z][a-zA-Z0-9]*$/.test(name) ? name : `'${name}'`)
