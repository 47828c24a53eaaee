import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { feathers } from '@feathersjs/feathers'
import restClientModule from '@feathersjs/rest-client'
import socketioClientModule from '@feathersjs/socketio-client'
import { spawn, type ChildProcess } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { io, type Socket } from 'socket.io-client'
import { packedFiles, packedProject, type PackedProject } from '../support/packed-library.js'

/*
 * README "Use plumage as a library", followed literally: plumage packed by npm and installed in a new project,
 * whose server program (the README quotes it from here) is type-checked against the package's declarations,
 * started, and served to the official Feathers v5 clients: a REST call, and its event received over socket.io.
 */
const restClient = restClientModule.default
const socketioClient = socketioClientModule.default
/** The client package types its socket with socket.io-client's CommonJS build; ours is the ESM one, the same class. */
type FeathersSocket = Parameters<typeof socketioClient>[0]

const server = `import { AdapterService, App } from 'plumage'
import { InMemoryStore } from 'plumage/memory'
import {
  AuthenticationService,
  BcryptPasswordHasher,
  JsonWebTokenService,
  JwtStrategy,
  LocalStrategy,
  authenticate,
  expressEngine,
  hashPassword,
  protect,
  socketIoTransport,
  type Connection
} from 'plumage/server'

type User = { id?: number; email: string; password?: string }
type Message = { id?: number; text: string }

const app = new App()
app.use('users', new AdapterService<User>(new InMemoryStore()))
app.service('users').hooks({
  before: { create: [hashPassword('password')], find: [authenticate('jwt')], get: [authenticate('jwt')] },
  after: { all: [protect('password')] }
})
const tokens = new JsonWebTokenService({ secret: process.env.AUTH_SECRET ?? 'a-long-random-secret' })
const local = new LocalStrategy(new BcryptPasswordHasher(), { service: 'users' })
app.use('authentication', new AuthenticationService({ tokens }).register(new JwtStrategy({ service: 'users' }), local))
app.use('messages', new AdapterService<Message>(new InMemoryStore()))
app.service('messages').hooks({ before: { all: [authenticate('jwt')] } })

// Real-time events go to the connections that logged in.
app.on('login', (_result: unknown, { connection }: { connection?: Connection } = {}) => {
  if (connection) app.channel('authenticated').join(connection)
})
app.publish(() => app.channel('authenticated'))
await app.setup()

const http = expressEngine(app)
socketIoTransport(app, http.server, {})
const running = await http.listen(Number(process.env.PORT ?? 3030), '127.0.0.1')
console.log('listening on', running.url)
`

/**
 * The same program on the fastify module's engine, as the README says: `fastifyEngine` from `plumage/fastify` in
 * place of `expressEngine`.
 */
const fastifyServer = server
  .replace('  expressEngine,\n', '')
  .replace("} from 'plumage/server'\n", "} from 'plumage/server'\nimport { fastifyEngine } from 'plumage/fastify'\n")
  .replace('const http = expressEngine(app)', 'const http = fastifyEngine(app)')

let project: PackedProject
const children: ChildProcess[] = []
const sockets: Socket[] = []

beforeAll(async () => {
  project = await packedProject('library-server')
  await writeFile(join(project.dir, 'package.json'), JSON.stringify({ type: 'module', dependencies: { plumage: '*' } }))
  await writeFile(join(project.dir, 'server.ts'), server)
  await writeFile(join(project.dir, 'fastify-server.ts'), fastifyServer)
  await writeFile(
    join(project.dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'nodenext', strict: true, skipLibCheck: true },
      files: ['server.ts', 'fastify-server.ts']
    })
  )
  // Fails with the compiler's message when an entry, its types or the README's program is wrong.
  await project.tsc(['-p', 'tsconfig.json'])
}, 300_000)

afterAll(async () => {
  for (const socket of sockets) socket.disconnect()
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL')
  await project?.cleanup()
})

/** Starts a compiled program and answers the URL it printed. */
async function start(program: string): Promise<string> {
  const child = spawn(process.execPath, [program], {
    cwd: project.dir,
    env: { PATH: process.env.PATH ?? '', PORT: '0', AUTH_SECRET: 'library-test-secret-0123456789' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  children.push(child)
  let errors = ''
  child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()))
  return new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the program exited (${code}): ${errors}`)))
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const url = /^listening on (\S+)$/.exec(line)?.[1]
      if (url) resolve(url)
    })
  })
}

describe('a server from the package entries', () => {
  it.each([
    ["express (the README's program)", 'server.js'],
    ['fastify', 'fastify-server.js']
  ])(
    'on %s: type-checked against the packed declarations, serves the official Feathers clients',
    async (_engine, program) => {
      if (program === 'fastify-server.js') {
        expect(fastifyServer).toContain("import { fastifyEngine } from 'plumage/fastify'")
        expect(fastifyServer).not.toContain('expressEngine')
      }
      const url = await start(program)

      const restApp = feathers().configure(restClient(url).fetch(fetch))
      const user = await restApp.service('users').create({ email: 'ann@example.com', password: 'secret-pw' })
      expect(user).toEqual({ id: 0, email: 'ann@example.com' })

      const socket = io(url, { transports: ['websocket'], forceNew: true })
      sockets.push(socket)
      const socketApp = feathers().configure(socketioClient(socket as unknown as FeathersSocket))
      const login = (await socketApp
        .service('authentication')
        .create({ strategy: 'local', email: 'ann@example.com', password: 'secret-pw' })) as { accessToken: string }
      expect(login.accessToken).toEqual(expect.any(String))

      const received = new Promise<unknown>((resolve) => socketApp.service('messages').once('created', resolve))
      const sent = await restApp
        .service('messages')
        .create({ text: 'over REST' }, { headers: { Authorization: `Bearer ${login.accessToken}` } })
      expect(sent).toEqual({ id: 0, text: 'over REST' })
      await expect(received).resolves.toEqual({ id: 0, text: 'over REST' })

      // Without a token the same call is refused, as Feathers' authenticate('jwt') refuses it.
      await expect(restApp.service('messages').create({ text: 'anonymous' })).rejects.toMatchObject({
        name: 'NotAuthenticated',
        code: 401
      })
    },
    120_000
  )

  it('ships the new entries in the tarball, declarations beside the JS', async () => {
    const files = await packedFiles(project.tarball)
    for (const entry of ['server', 'fastify'])
      for (const extension of ['js', 'd.ts']) expect(files).toContain(`package/dist/lib/library/${entry}.${extension}`)
  })
})
