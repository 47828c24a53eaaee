#!/usr/bin/env node
/**
 * `npm run generate -- <what> …`: code for your own app, in the project's layout and style.
 *
 *   npm run generate -- service <name> [--store <collection>] [--id number|string] [--no-auth] [--owner]
 *       src/services/<name>/ (schema, hooks, service), test/services/<name>.test.ts, its line in
 *       src/services/index.ts and its entry in the typed-client map (src/reference-services.ts).
 *       --store   the store collection (table) its records live in; default: the name. Which store
 *                 (memory, PostgreSQL, RethinkDB) is the app's STORE setting, memory by default.
 *       --id      number: integers the store counts (memory only); string: UUIDs the service assigns,
 *                 on every store. Default: number.
 *       --auth / --no-auth   every method needs a login (default) or none does.
 *       --owner   records carry the logged-in user's id in `userId`; only the owner may update, patch
 *                 or remove one (restrictToOwner). Needs --auth.
 *   npm run generate -- hook <name>
 *       src/hooks/<name>.ts (an around hook) and test/hooks/<name>.test.ts.
 *   npm run generate -- blank
 *       turns the clone into a blank app of your own (README "Start your own app").
 *
 * Names are kebab-case. A refused name or option prints one line and exits 1.
 */
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { makeBlank } from './generate/blank.mjs'
import { generateHook } from './generate/hook.mjs'
import { Refusal } from './generate/names.mjs'
import { generateService } from './generate/service.mjs'

const root = process.env.PLUMAGE_ROOT ?? resolve(dirname(fileURLToPath(import.meta.url)), '..')
const usage =
  'usage: npm run generate -- service <name> [--store <collection>] [--id number|string] [--no-auth] [--owner]\n' +
  '       npm run generate -- hook <name>\n' +
  '       npm run generate -- blank\n'

async function main(argv) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      store: { type: 'string' },
      id: { type: 'string', default: 'number' },
      // Spelled out: parseArgs learnt `allowNegative` only in Node 20.16.
      auth: { type: 'boolean', default: true },
      'no-auth': { type: 'boolean', default: false },
      owner: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' }
    }
  })
  const [what, name, ...rest] = positionals
  if (values.help) return void process.stdout.write(usage)
  if (rest.length) throw new Refusal(`one name only (got ${[name, ...rest].join(', ')})`)
  let written
  if (what === 'service')
    written = await generateService(root, name, {
      collection: values.store,
      id: values.id,
      auth: values.auth && !values['no-auth'],
      owner: values.owner
    })
  else if (what === 'hook') written = await generateHook(root, name)
  else if (what === 'blank') written = await makeBlank(root)
  else throw new Refusal(what ? `nothing to generate called '${what}' (service, hook or blank)` : usage.trimEnd())
  process.stdout.write(written.map((path) => `  ${path}\n`).join(''))
  if (what === 'service')
    process.stdout.write(`the ${name} service is registered; run its test: npx jest test/services/${name}.test.ts\n`)
}

try {
  await main(process.argv.slice(2))
} catch (error) {
  if (error instanceof Refusal || error?.code?.startsWith?.('ERR_PARSE_ARGS')) {
    process.stderr.write(`${error.message}\n`)
    process.exit(1)
  }
  throw error
}
