// `npm run generate -- blank`: turns the clone into a blank app of your own (README "Start your own app"). The
// chat goes (the messages service, its page, the benchmarks built on it, and the tests that use it as their
// fixture); users and authentication stay, so a generated service's login works from the first start.
import { existsSync, readFileSync } from 'node:fs'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Refusal } from './names.mjs'
import { format } from './format.mjs'

/**
 * Deleted (scripts/generate/chat-files.json, listed in the README): the chat's service and benchmarks, and the
 * tests whose fixture is the chat.
 */
export const chatFiles = JSON.parse(
  readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'chat-files.json'), 'utf8')
)

/**
 * Rewritten: the page, its script and style, the registry, the rules, the typed-client map and package.json's
 * scripts.
 */
export async function makeBlank(root) {
  if (!existsSync(join(root, 'src', 'services', 'messages')))
    throw new Refusal('this is a blank app already: src/services/messages is gone')
  for (const path of chatFiles) await rm(join(root, path), { recursive: true, force: true })
  const edit = async (path, change) => {
    const file = join(root, path)
    await writeFile(file, await format(root, path, change(await readFile(file, 'utf8'))))
  }
  await edit('src/services/index.ts', (text) => dropLines(text, (line) => line.includes("'./messages/")))
  await edit('src/services/rules.ts', (text) =>
    dropLines(text, (line) => line.includes("'./messages/") || line.trimStart().startsWith('messages:'))
  )
  await edit('src/reference-services.ts', (text) =>
    dropLines(text, (line) => line.includes('/services/messages/') || line.trimStart().startsWith('messages:'))
  )
  await edit('package.json', (text) => {
    const pkg = JSON.parse(text)
    for (const name of Object.keys(pkg.scripts)) if (/^(bench|test:soak)/.test(name)) delete pkg.scripts[name]
    return JSON.stringify(pkg, null, 2)
  })
  const page = {
    'public/index.html': `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>My app</title>
    <link rel="icon" href="favicon.svg" type="image/svg+xml" />
    <link rel="stylesheet" href="style.css" />
    <script src="app.js" defer></script>
  </head>
  <body>
    <h1>My app</h1>
    <p id="status">Checking the server…</p>
  </body>
</html>
`,
    'public/style.css': `body {
  font-family: system-ui, sans-serif;
  max-width: 40rem;
  margin: 2rem auto;
  padding: 0 1rem;
}
`,
    'src/interfaces/web/chat.ts': `/*
 * The page's script (public/index.html), bundled into public/app.js by scripts/build-client.mjs. Build your
 * front end from here: createClient (src/interfaces/client) with the typed map of src/reference-services.ts.
 */
const status = document.getElementById('status')
fetch('/health')
  .then((response) => (response.ok ? 'The server is up.' : \`The server answers \${response.status}.\`))
  .catch(() => 'The server is unreachable.')
  .then((text) => {
    if (status) status.textContent = text
  })
`
  }
  for (const [path, text] of Object.entries(page)) await writeFile(join(root, path), await format(root, path, text))
  return [
    ...chatFiles.map((path) => `${path} (deleted)`),
    'src/services/index.ts',
    'src/services/rules.ts',
    'src/reference-services.ts',
    'package.json',
    ...Object.keys(page)
  ]
}

const dropLines = (text, drop) =>
  text
    .split('\n')
    .filter((line) => !drop(line))
    .join('\n')
