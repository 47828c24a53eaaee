// `npm run generate -- service <name>`: writes src/services/<name>/ and its test, registers the service with one
// line in src/services/index.ts and adds it to the typed-client map (src/reference-services.ts).
import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { checkName, Refusal } from './names.mjs'
import { hooksFile, schemaFile, serviceFile, serviceNames } from './service-files.mjs'
import { serviceTest } from './service-test.mjs'
import { format } from './format.mjs'

/** The service's files, registered; returns the paths written or changed (relative to root). */
export async function generateService(root, name, options) {
  checkName('service', name)
  if (options.owner && !options.auth)
    throw new Refusal('--owner needs a login (records belong to the logged-in user): drop --no-auth')
  if (!['number', 'string'].includes(options.id))
    throw new Refusal(`--id must be number or string (got '${options.id}')`)
  if (options.collection !== undefined && !/^[a-z][a-z0-9_-]*$/.test(options.collection))
    throw new Refusal(`--store must name a collection in lower case (got '${options.collection}')`)
  const folder = join('src', 'services', name)
  if (existsSync(join(root, folder))) throw new Refusal(`service '${name}' exists already (${folder})`)
  const n = serviceNames(name, options)
  const map = join(root, 'src', 'reference-services.ts')
  const types = await readFile(map, 'utf8')
  for (const taken of [n.schemas, `type ${n.type}`])
    if (types.includes(` ${taken},`) || types.includes(` ${taken} `))
      throw new Refusal(`'${taken.replace('type ', '')}' is taken in src/reference-services.ts: choose another name`)

  await mkdir(join(root, folder))
  const files = {
    [join(folder, `${name}.schema.ts`)]: schemaFile(n),
    [join(folder, `${name}.hooks.ts`)]: hooksFile(n),
    [join(folder, `${name}.service.ts`)]: serviceFile(n),
    [join('test', 'services', `${name}.test.ts`)]: serviceTest(n)
  }
  await mkdir(join(root, 'test', 'services'), { recursive: true })
  for (const [path, text] of Object.entries(files)) await writeFile(join(root, path), await format(root, path, text))
  await register(root, n)
  await writeFile(map, await format(root, 'src/reference-services.ts', addToTypedMap(types, n)))
  return [...Object.keys(files), 'src/services/index.ts', 'src/reference-services.ts']
}

/** The service's line in src/services/index.ts, among the others in the order of their paths. */
async function register(root, n) {
  const file = join(root, 'src', 'services', 'index.ts')
  const lines = (await readFile(file, 'utf8')).split('\n')
  const alias = /^[a-z][a-zA-Z0-9]*$/.test(n.name) ? n.name : `'${n.name}'`
  const line = `export { ${n.use} as ${alias} } from './${n.name}/${n.name}.service.js'`
  const exports = lines.flatMap((text, index) => (text.startsWith('export {') ? [index] : []))
  const path = (text) => text.match(/ as '?([a-z0-9-]+)'? \}/)?.[1] ?? ''
  const after = exports.find((index) => path(lines[index]) > n.name)
  const at = after ?? (exports.length ? exports.at(-1) + 1 : lines.length)
  lines.splice(at, 0, line)
  await writeFile(file, lines.join('\n'))
}

/** Adds the service's schemas to src/reference-services.ts: the import, the re-export and the `Services` entry. */
function addToTypedMap(text, n) {
  const lines = text.split('\n')
  const from = `'./services/${n.name}/${n.name}.schema.js'`
  const insertAfterLast = (test, line) => {
    const index = lines.findLastIndex(test)
    if (index === -1) throw new Refusal(`src/reference-services.ts has no line to add '${line}' after`)
    lines.splice(index + 1, 0, line)
  }
  insertAfterLast((line) => line.startsWith('import type {'), `import type { ${n.schemas} } from ${from}`)
  insertAfterLast(
    (line) => /^export \{.*\} from '\.\/services\//.test(line) || line.startsWith('export type {'),
    `export { ${n.schemas}, type ${n.type} } from ${from}`
  )
  const start = lines.findIndex((line) => line.startsWith('export interface Services'))
  const end = lines.findIndex((line, index) => index > start && line === '}')
  if (start === -1 || end === -1)
    throw new Refusal('src/reference-services.ts has no `export interface Services { … }`')
  lines.splice(end, 0, `  ${n.property}: SchemaTypes<typeof ${n.schemas}, { paginate: true }>`)
  return lines.join('\n')
}
