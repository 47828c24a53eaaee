// Loaded with `--import` by the feathers-casl server of `npm run bench:rules`: feathers-casl 2.2 (the newest the npm
// registry can install with its dependencies) imports `rulesToQuery` from CASL 6, which CASL 7 (plumage's rules)
// no longer has. npm installs CASL 6 beside it as `@casl/ability-6`; this hook gives feathers-casl that copy.
import { register } from 'node:module'

const hooks = `
export async function resolve(specifier, context, next) {
  const fromFeathersCasl = context.parentURL?.includes('/node_modules/feathers-casl/')
  if (fromFeathersCasl && (specifier === '@casl/ability' || specifier.startsWith('@casl/ability/')))
    return next(specifier.replace('@casl/ability', '@casl/ability-6'), context)
  return next(specifier, context)
}`
register(`data:text/javascript,${encodeURIComponent(hooks)}`)
