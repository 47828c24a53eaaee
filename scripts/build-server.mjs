#!/usr/bin/env node
// Bundles the server (src/main.ts and everything it imports from src/, plus the packages it loads at
// startup) into dist/plumage.mjs (or the file given as the first argument), the file `npm start` and
// the Docker image run. The settings are in build-options.mjs.
import { build } from 'esbuild'
import { resolve } from 'node:path'
import { serverOptions } from './build-options.mjs'

await build(serverOptions(process.argv[2] ? resolve(process.argv[2]) : undefined))
