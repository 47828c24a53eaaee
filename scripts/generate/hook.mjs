// `npm run generate -- hook <name>`: an around hook in src/hooks/<name>.ts (the app's own hooks) and its test.
import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { camel, checkName, Refusal } from './names.mjs'
import { format } from './format.mjs'

export async function generateHook(root, name) {
  checkName('hook', name)
  const path = join('src', 'hooks', `${name}.ts`)
  if (existsSync(join(root, path))) throw new Refusal(`hook '${name}' exists already (${path})`)
  const hook = camel(name)
  const files = {
    [path]: `import type { HookContext } from '../application/hook-context.js'

/**
 * \`${hook}\`: an around hook — code before \`await next()\` runs before the call's before hooks, the rest after its
 * after hooks. Register it on a service (\`app.service('todos').hooks({ around: { all: [${hook}()] } })\`) or on
 * every service (\`app.hooks({ around: { all: [${hook}()] } })\`). Replace the log line with what the hook does.
 */
export function ${hook}(log: (line: string) => void = console.log) {
  return async (context: HookContext, next: () => Promise<void>): Promise<void> => {
    log(\`${name}: \${context.path}.\${context.method}\`)
    await next()
  }
}
`,
    [join('test', 'hooks', `${name}.test.ts`)]: `import { describe, expect, it } from '@jest/globals'
import { App } from '../../src/application/app.js'
import { AjvSchemaValidator } from '../../src/infrastructure/schema/ajv-schema-validator.js'
import { ${hook} } from '../../src/hooks/${name}.js'

describe('the ${name} hook', () => {
  it('runs around each call of the service it is registered on', async () => {
    const lines: string[] = []
    const app = new App({ validator: new AjvSchemaValidator() })
    app.use('items', { find: async () => [{ id: 1 }] })
    app.service('items').hooks({ around: { all: [${hook}((line) => lines.push(line))] } })
    await expect(app.service('items').find!({})).resolves.toEqual([{ id: 1 }])
    expect(lines).toEqual(['${name}: items.find'])
  })
})
`
  }
  for (const [file, text] of Object.entries(files)) {
    await mkdir(join(root, file, '..'), { recursive: true })
    await writeFile(join(root, file), await format(root, file, text))
  }
  return Object.keys(files)
}
