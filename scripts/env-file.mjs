// Reads `.env` from the app's folder into process.env when the file exists (for `npm start` and
// `npm run dev`; `node --env-file` refuses to start without the file). Variables already set in
// the environment win over the file. .env is git-ignored; .env.example documents every variable.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { root } from './build-options.mjs'

/** Loads `<root>/.env` when present; returns its path, or undefined when there is none. */
export function loadEnvFile(base = root) {
  const file = join(base, '.env')
  if (!existsSync(file)) return undefined
  process.loadEnvFile(file)
  return file
}
