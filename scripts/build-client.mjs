#!/usr/bin/env node
// Bundles the chat page's script (src/interfaces/web/chat.ts, with plumage's browser client and
// socket.io-client) into public/app.js, or into the directory given as the first argument. The
// settings are in build-options.mjs.
import { build } from 'esbuild'
import { resolve } from 'node:path'
import { clientOptions } from './build-options.mjs'

await build(clientOptions(process.argv[2] ? resolve(process.argv[2]) : undefined))
