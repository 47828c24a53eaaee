// Generated code is formatted by the project's own Prettier settings, so `npm run lint` accepts it as written.
import { join } from 'node:path'

export async function format(root, path, text) {
  const prettier = await import('prettier')
  const options = (await prettier.resolveConfig(join(root, path))) ?? {}
  return prettier.format(text, { ...options, filepath: join(root, path) })
}
