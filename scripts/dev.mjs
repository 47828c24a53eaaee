#!/usr/bin/env node
// `npm run dev`: the development loop. Reads .env when present, bundles the server and the chat
// page with esbuild in watch mode, and restarts the server after every successful rebuild of it
// (public/index.html and style.css are served from disk: reload the page). No type check here:
// your editor and `npm run typecheck` do that, `npm run build` and `npm start` too.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { context } from 'esbuild'
import { clientOptions, root, serverOptions } from './build-options.mjs'
import { loadEnvFile } from './env-file.mjs'

const say = (line) => process.stderr.write(`[dev] ${line}\n`)
const envFile = loadEnvFile()
say(envFile ? `read ${envFile}` : 'no .env file (copy .env.example to .env to keep settings)')
// One secret for the whole session, so a restart after a change does not log everybody out.
if (!process.env.AUTH_SECRET) {
  process.env.AUTH_SECRET = randomBytes(32).toString('hex')
  say(
    'AUTH_SECRET is not set: using a random one for this session (logins survive restarts until you stop npm run dev; set it in .env to keep them longer)'
  )
}

const main = join(root, 'dist', 'plumage.mjs')
let server
let stopping = false

/** Stops the running server (SIGTERM: it closes its connections; killed after 5 s) and starts the new build. */
let restarting = Promise.resolve()
function restart() {
  restarting = restarting.then(async () => {
    await stop()
    if (stopping) return
    const child = spawn(process.execPath, ['--enable-source-maps', main], {
      cwd: root,
      stdio: 'inherit',
      env: process.env
    })
    server = child
    child.once('exit', (code, signal) => {
      if (server === child) server = undefined
      if (!child.restarting && !stopping) say(`the server exited (${signal ?? `code ${code}`}); waiting for a change`)
    })
  })
  return restarting
}

function stop() {
  const child = server
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  child.restarting = true
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 5_000)
    child.once('exit', () => {
      clearTimeout(kill)
      resolve()
    })
    child.kill('SIGTERM')
  })
}

let builds = 0
const restartOnSuccess = {
  name: 'restart-server',
  setup(build) {
    // An onEnd callback returns nothing (or a promise): esbuild reports any other value as an error of the plugin.
    build.onEnd((result) => {
      if (result.errors.length > 0) {
        say('the server did not build: fix the error above, the running one stays')
        return
      }
      if (builds++ > 0) say('server rebuilt: restarting')
      void restart()
    })
  }
}
const announceClient = {
  name: 'announce-client',
  setup(build) {
    let first = true
    build.onEnd((result) => {
      if (result.errors.length === 0 && !first) say('chat page rebuilt (public/app.js): reload the page')
      first = false
    })
  }
}

// The server's own plugins (packages left to node_modules, one copy of each package…) run in development too.
const serverBuild = serverOptions()
const contexts = [
  await context({ ...clientOptions(), plugins: [announceClient] }),
  await context({ ...serverBuild, plugins: [...serverBuild.plugins, restartOnSuccess] })
]
for (const ctx of contexts) await ctx.watch()
say('watching src/ for changes; Ctrl-C stops')

async function shutdown() {
  if (stopping) return
  stopping = true
  await Promise.all(contexts.map((ctx) => ctx.dispose()))
  await restarting
  await stop()
  process.exit(0)
}
process.once('SIGINT', () => void shutdown())
process.once('SIGTERM', () => void shutdown())
