import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { cleanEnv, copyRepository, lintChanged, type CheckoutCopy } from './checkout-copy.js'

/*
 * `npm run generate` in a copy of the repository (the tutorial's "Add a service"): a service with every option (a
 * kebab-case name, owner-only rules, UUIDs), one without login in a collection of its own, a hook, and the
 * tutorial's by-hand steps for the todos example; then the copy type-checks, lints, and passes the new tests and
 * the composition root's (whose service list comes from the registry). Refused names and options print one line,
 * exit 1 and write nothing. One copy for all: type-check and lint run side by side.
 */
const exec = promisify(execFile)

/** Runs a command; a failure says what it printed. */
async function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }) {
  try {
    return await exec(command, args, { ...options, maxBuffer: 10_000_000 })
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string }
    throw new Error(`${[command, ...args].join(' ').slice(0, 200)} failed:\n${stdout}\n${stderr}`.slice(-4000), {
      cause: error
    })
  }
}
let copy: CheckoutCopy

/** Runs `npm run generate -- …` in the copy; never throws. */
async function generate(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec('npm', ['run', '--silent', 'generate', '--', ...args], {
      cwd: copy.dir,
      env: cleanEnv()
    })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string }
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
  }
}

/** The shell block of the tutorial's "Add a service" (docs/tutorial/add-a-service.md) copying examples/todos. */
function byHandSteps(): string {
  const chapter = readFileSync('docs/tutorial/add-a-service.md', 'utf8')
  const block = chapter
    .split('<!-- command -->\n```sh\n')
    .slice(1)
    .map((rest) => rest.split('\n```')[0]!)
    .find((code) => code.includes('examples/todos/todos.service.ts'))
  if (!block) throw new Error('"Add a service" has no command block copying examples/todos/todos.service.ts')
  return block
}

beforeAll(async () => {
  copy = await copyRepository()
}, 120_000)
afterAll(() => copy?.remove())

describe('npm run generate', () => {
  it('refuses a bad name or option with one line and exit code 1, writing nothing', async () => {
    const before = await readdir(join(copy.dir, 'src', 'services'))
    const refusals: [string[], string][] = [
      [['service', 'TodoItems'], "'TodoItems' is not a kebab-case name"],
      [['service', 'todo_items'], "'todo_items' is not a kebab-case name"],
      [['service', 'users'], "service 'users' exists already (src/services/users)"],
      [['service', 'authentication'], "'authentication' is reserved"],
      [['service', 'notes', '--owner', '--no-auth'], '--owner needs a login'],
      [['service', 'notes', '--id', 'uuid'], "--id must be number or string (got 'uuid')"],
      [['hook', 'Log'], "'Log' is not a kebab-case name"],
      [['widget', 'x'], "nothing to generate called 'widget'"]
    ]
    // All at once, as a script might: each refusal still writes nothing.
    const answers = await Promise.all(refusals.map(([args]) => generate(...args)))
    for (const [n, [args, message]] of refusals.entries()) {
      const { code, stderr } = answers[n]!
      expect({ args, code, lines: stderr.trim().split('\n').length }).toEqual({ args, code: 1, lines: 1 })
      expect(stderr).toContain(message)
    }
    expect(await readdir(join(copy.dir, 'src', 'services'))).toEqual(before)
  }, 90_000)

  it('writes services and a hook that type-check, lint and pass their tests, registered with one line each', async () => {
    const since = Date.now()
    const registry = join(copy.dir, 'src', 'services', 'index.ts')
    const lines = readFileSync(registry, 'utf8').split('\n').length
    expect((await generate('service', 'todo-items', '--owner', '--id', 'string')).code).toBe(0)
    expect((await generate('service', 'notes', '--no-auth', '--store', 'jottings')).code).toBe(0)
    expect((await generate('hook', 'log-calls')).code).toBe(0)
    await run('bash', ['-euo', 'pipefail', '-c', byHandSteps()], { cwd: copy.dir })
    expect(readFileSync(registry, 'utf8').split('\n').length).toBe(lines + 3)
    for (const file of [
      'src/services/todo-items/todo-items.service.ts',
      'src/services/notes/notes.hooks.ts',
      'src/services/todos/todos.service.ts',
      'src/hooks/log-calls.ts',
      'test/services/todo-items.test.ts',
      'test/hooks/log-calls.test.ts'
    ])
      expect(`${file}: ${existsSync(join(copy.dir, file))}`).toBe(`${file}: true`)
    expect(readFileSync(join(copy.dir, 'src', 'reference-services.ts'), 'utf8')).toContain(
      "'todo-items': SchemaTypes<typeof todoItemSchemas, { paginate: true }>"
    )
    const env = cleanEnv()
    const tsc = join(copy.dir, 'node_modules', 'typescript', 'bin', 'tsc')
    await Promise.all([
      run(process.execPath, [tsc, '--noEmit'], { cwd: copy.dir, env }),
      lintChanged(copy, since).then((changed) => expect(changed).toContain('src/services/index.ts'))
    ])
    const jest = join(copy.dir, 'node_modules', 'jest', 'bin', 'jest.js')
    const tests = ['test/services', 'test/hooks', 'test/container.test.ts']
    const { stderr } = await run(process.execPath, [jest, '--maxWorkers=1', ...tests], {
      cwd: copy.dir,
      env: cleanEnv({ NODE_OPTIONS: '--experimental-vm-modules' })
    })
    expect(stderr).toMatch(/Test Suites: 4 passed, 4 total/)
  }, 600_000)
})
