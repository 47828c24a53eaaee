import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals'
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const root = process.cwd()
let fixture: string
// Each cruise starts dependency-cruiser afresh (10–25 s on a loaded machine; some cases run two).
jest.setTimeout(120_000)

/** Runs the project's dependency-cruiser rules over a throw-away tree inside the project. */
async function cruise(files: Record<string, string>): Promise<{ ok: boolean; output: string }> {
  rmSync(join(fixture, 'src'), { recursive: true, force: true })
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(fixture, path)), { recursive: true })
    writeFileSync(join(fixture, path), text)
  }
  try {
    const { stdout } = await run(
      process.execPath,
      [
        join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'),
        'src',
        '--config',
        join(root, '.dependency-cruiser.cjs')
      ],
      { cwd: fixture }
    )
    return { ok: true, output: stdout }
  } catch (error) {
    return { ok: false, output: String((error as { stdout?: string }).stdout) }
  }
}

beforeAll(() => {
  mkdirSync(join(root, 'test-artifacts'), { recursive: true })
  fixture = mkdtempSync(join(root, 'test-artifacts', 'lint-'))
  writeFileSync(
    join(fixture, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext' } })
  )
})
afterAll(() => rmSync(fixture, { recursive: true, force: true }))

describe('layer rules (npm run lint)', () => {
  it('fails when a domain file imports express', async () => {
    const result = await cruise({ 'src/domain/bad.ts': "import express from 'express'\nexport const app = express\n" })
    expect(result.ok).toBe(false)
    expect(result.output).toContain('domain-is-pure')
  })

  it('fails when an adapter imports another adapter, or store-commons past its faces', async () => {
    const result = await cruise({
      'src/infrastructure/memory/compile-filter.ts': 'export const compileFilter = 1\n',
      'src/infrastructure/store-commons/event-log/heartbeat.ts': 'export const heartbeat = 2\n',
      'src/infrastructure/postgres/postgres-store.ts':
        "import { compileFilter } from '../memory/compile-filter.js'\nimport { heartbeat } from '../store-commons/event-log/heartbeat.js'\nexport const x = compileFilter + heartbeat\n"
    })
    expect(result.ok).toBe(false)
    expect(result.output).toMatch(
      /adapters-are-independent: src\/infrastructure\/postgres\/postgres-store\.ts → src\/infrastructure\/memory\/compile-filter\.ts/
    )
    expect(result.output).toMatch(
      /adapters-are-independent: src\/infrastructure\/postgres\/postgres-store\.ts → src\/infrastructure\/store-commons\/event-log\/heartbeat\.ts/
    )
  })

  it('lets an adapter import its own folder, config and the faces of store-commons', async () => {
    const result = await cruise({
      'src/infrastructure/config/config.ts': 'export const config = 1\n',
      'src/infrastructure/store-commons/search-pattern.ts': 'export const pattern = 2\n',
      'src/infrastructure/store-commons/index.ts': "export { pattern } from './search-pattern.js'\n",
      'src/infrastructure/store-commons/event-log/heartbeat.ts':
        "import { pattern } from '../index.js'\nexport const heartbeat = pattern\n",
      'src/infrastructure/store-commons/event-log/index.ts': "export { heartbeat } from './heartbeat.js'\n",
      'src/infrastructure/postgres/postgres-writes.ts': 'export const writes = 3\n',
      'src/infrastructure/postgres/postgres-store.ts':
        "import { config } from '../config/config.js'\nimport { pattern } from '../store-commons/index.js'\nimport { heartbeat } from '../store-commons/event-log/index.js'\nimport { writes } from './postgres-writes.js'\nexport const x = config + pattern + heartbeat + writes\n"
    })
    expect(result.output).not.toContain('error')
    expect(result.ok).toBe(true)
  })

  it('fails when a transport imports an infrastructure adapter directly', async () => {
    const result = await cruise({
      'src/infrastructure/store.ts': 'export const store = 1\n',
      'src/interfaces/rest/server.ts': "import { store } from '../../infrastructure/store.js'\nexport const x = store\n"
    })
    expect(result.ok).toBe(false)
    expect(result.output).toContain('interfaces-not-infrastructure')
  })

  it('fails when client code imports a node built-in', async () => {
    const result = await cruise({
      'src/interfaces/client/bad.ts': "import { EventEmitter } from 'node:events'\nexport const e = EventEmitter\n"
    })
    expect(result.ok).toBe(false)
    expect(result.output).toContain('client-is-browser-safe')
  })

  it('fails when a service of src/services imports a store adapter or a transport', async () => {
    const result = await cruise({
      'src/infrastructure/store.ts': 'export const store = 1\n',
      'src/interfaces/rest/server.ts': 'export const server = 2\n',
      'src/services/todos/todos.service.ts':
        "import { store } from '../../infrastructure/store.js'\nimport { server } from '../../interfaces/rest/server.js'\nexport const x = store + server\n"
    })
    expect(result.ok).toBe(false)
    expect(result.output).toContain('services-are-application-code')
    expect(result.output).toMatch(
      /services-are-application-code: src\/services\/todos\/todos\.service\.ts → src\/interfaces\/rest\/server\.ts/
    )
  })

  it('fails when the application core imports one of the services', async () => {
    const result = await cruise({
      'src/services/todos/todos.schema.ts': 'export const schema = {}\n',
      'src/application/use-case.ts':
        "import { schema } from '../services/todos/todos.schema.js'\nexport const s = schema\n"
    })
    expect(result.ok).toBe(false)
    expect(result.output).toContain('core-does-not-know-services')
  })

  it('fails when a transport reaches past the application seam', async () => {
    const result = await cruise({
      'src/application/app.ts': 'export class App {}\n',
      'src/application/transport/index.ts': "export type { App } from '../app.js'\n",
      'src/interfaces/rest/server.ts': "import { App } from '../../application/app.js'\nexport const app = new App()\n"
    })
    expect(result.ok).toBe(false)
    expect(result.output).toContain('transports-use-the-seam')
    const throughTheSeam = await cruise({
      'src/application/app.ts': 'export class App {}\n',
      'src/application/transport/index.ts': "export type { App } from '../app.js'\n",
      'src/interfaces/rest/server.ts':
        "import type { App } from '../../application/transport/index.js'\nexport const use = (app: App) => app\n"
    })
    expect(throughTheSeam.output).not.toContain('transports-use-the-seam')
  })

  it('fails when a driven adapter builds on an application use case', async () => {
    const result = await cruise({
      'src/application/adapter-service.ts': 'export class AdapterService {}\n',
      'src/infrastructure/store-service.ts':
        "import { AdapterService } from '../application/adapter-service.js'\nexport class StoreService extends AdapterService {}\n"
    })
    expect(result.ok).toBe(false)
    expect(result.output).toContain('infrastructure-not-application')
  })

  it('lets a library entry compose an adapter with a use case, as the composition root does', async () => {
    const result = await cruise({
      'src/application/adapter-service.ts': 'export class AdapterService {}\n',
      'src/infrastructure/store.ts': 'export class Store {}\n',
      'src/library/store-service.ts':
        "import { AdapterService } from '../application/adapter-service.js'\nimport { Store } from '../infrastructure/store.js'\nexport const service = () => Object.assign(new AdapterService(), { store: new Store() })\n"
    })
    expect(result.output).not.toContain('error')
    expect(result.ok).toBe(true)
  })

  it('fails when plumage imports one of its own package entries', async () => {
    const result = await cruise({
      'src/library/index.ts': 'export const entry = 1\n',
      'src/application/use-case.ts': "import { entry } from '../library/index.js'\nexport const x = entry\n"
    })
    expect(result.ok).toBe(false)
    expect(result.output).toContain('library-entries-are-outermost')
  })

  it('fails when files of the application kernel import each other both ways, even for types only', async () => {
    const result = await cruise({
      'src/application/app.ts':
        "import type { HookContext } from './hook-context.js'\nexport class App { run(c: HookContext) { return c } }\n",
      'src/application/hook-context.ts':
        "import type { App } from './app.js'\nexport interface HookContext { app: App }\n"
    })
    expect(result.ok).toBe(false)
    expect(result.output).toContain('application-kernel-one-way')
  })

  it('fails when the adapter kit imports an adapter, or code outside tests imports the kit', async () => {
    const result = await cruise({
      'src/infrastructure/store.ts': 'export const store = 1\n',
      'src/testing/store.contract.ts':
        "import { store } from '../infrastructure/store.js'\nexport const contract = () => store\n",
      'src/application/use-case.ts':
        "import { contract } from '../testing/store.contract.js'\nexport const use = () => contract()\n"
    })
    expect(result.ok).toBe(false)
    expect(result.output).toMatch(
      /testing-is-a-kit-over-the-core: src\/testing\/store\.contract\.ts → src\/infrastructure\/store\.ts/
    )
    expect(result.output).toMatch(
      /only-tests-use-the-kit: src\/application\/use-case\.ts → src\/testing\/store\.contract\.ts/
    )
  })

  it('passes a tree that follows the rules', async () => {
    const result = await cruise({
      'src/domain/port.ts': 'export interface Port { x: number }\n',
      'src/application/use-case.ts':
        "import type { Port } from '../domain/port.js'\nexport const use = (p: Port) => p.x\n",
      'src/infrastructure/adapter.ts':
        "import type { Port } from '../domain/port.js'\nexport const adapter: Port = { x: 1 }\n",
      'src/services/todos/todos.service.ts':
        "import type { Port } from '../../domain/port.js'\nimport { use } from '../../application/use-case.js'\nexport const todos = (p: Port) => use(p)\n",
      'src/container.ts':
        "import { adapter } from './infrastructure/adapter.js'\nimport { use } from './application/use-case.js'\nexport const value = use(adapter)\n",
      'src/testing/port.contract.ts':
        "import type { Port } from '../domain/port.js'\nimport { use } from '../application/use-case.js'\nexport const check = (p: Port) => use(p)\n"
    })
    expect(result.output).not.toContain('error')
    expect(result.ok).toBe(true)
  })
})
