import { Worker } from 'node:worker_threads'
import type { JQueryLike } from '../../src/interfaces/client/rest/http-libraries.js'

interface XhrSnapshot {
  status: number
  statusText: string
  responseText?: string
  /** The response's headers, lower-case names (the worker's xhr.getAllResponseHeaders()). */
  headers: Record<string, string>
}

/*
 * jsdom 29 loads ESM through require(), which Node 20 supports but jest's module loader does not.
 * So real jQuery runs on a real jsdom window in a worker thread, and the `$` handed to the client
 * forwards each `$.ajax(settings)` there: the client's exact settings go through jQuery and jsdom's
 * XMLHttpRequest, and the jqXHR fields jQuery reports come back.
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
const { JSDOM } = require('jsdom')
const { jQueryFactory } = require('jquery/factory')
const dom = new JSDOM('', { url: workerData.url })
const $ = jQueryFactory(dom.window)
const headers = (xhr) => Object.fromEntries((xhr.getAllResponseHeaders() || '').trim().split(/\\r?\\n/)
  .filter(Boolean).map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]))
const snapshot = (xhr) => ({ status: xhr.status, statusText: xhr.statusText, responseText: xhr.responseText, headers: headers(xhr) })
parentPort.on('message', ({ seq, settings }) => {
  $.ajax(settings).then(
    (_data, _status, xhr) => parentPort.postMessage({ seq, ok: true, xhr: snapshot(xhr) }),
    (xhr) => parentPort.postMessage({ seq, ok: false, xhr: snapshot(xhr) }))
})
parentPort.on('close', () => dom.window.close())
`

export function jqueryInJsdom(origin: string): { $: JQueryLike; close(): Promise<number> } {
  const worker = new Worker(WORKER, { eval: true, workerData: { url: origin } })
  const pending = new Map<number, (reply: { ok: boolean; xhr: XhrSnapshot }) => void>()
  let seq = 0
  worker.on('message', (reply: { seq: number; ok: boolean; xhr: XhrSnapshot }) => {
    pending.get(reply.seq)?.(reply)
    pending.delete(reply.seq)
  })
  const $: JQueryLike = {
    ajax(settings) {
      const id = seq++
      const reply = new Promise<{ ok: boolean; xhr: XhrSnapshot }>((resolve) => pending.set(id, resolve))
      worker.postMessage({ seq: id, settings })
      return {
        then(done, fail) {
          return reply.then(({ ok, xhr: snapshot }) => {
            // The jqXHR's header reader, over the headers the worker's xhr received.
            const xhr = {
              ...snapshot,
              getResponseHeader: (name: string) => snapshot.headers[name.toLowerCase()] ?? null
            }
            return ok ? done(xhr.responseText, 'success', xhr) : fail(xhr)
          })
        }
      }
    }
  }
  return { $, close: () => worker.terminate() }
}
