import { markdownToHtml } from './markdown.js'

/*
 * `GET /asyncapi`: the AsyncAPI document (asyncapi-document.ts) made readable, beside Swagger UI at /docs.
 * Plain HTML and a small script of ours reading `/asyncapi.json` (no renderer package, no CDN): per channel,
 * what a client sends and what the server sends, with each message's payload; then the shared schemas.
 * The descriptions and summaries are Markdown, rendered on the server (markdown.ts) into the page.
 */

/** Where the AsyncAPI document is served. */
export const ASYNCAPI_PATH = '/asyncapi.json'
/** Where the page rendering it is served. */
export const ASYNCAPI_PAGE_PATH = '/asyncapi'

/** The page's script: fetches the document next to the page and lists channels, operations and messages. */
const ASYNCAPI_SCRIPT = `(async () => {
  const main = document.getElementById('asyncapi')
  const element = (tag, properties = {}, ...children) => {
    const node = Object.assign(document.createElement(tag), properties)
    node.append(...children.filter((child) => child !== undefined))
    return node
  }
  const response = await fetch(new URL('asyncapi.json', window.location.href))
  if (!response.ok) {
    main.replaceChildren(element('p', { textContent: 'Could not load asyncapi.json (' + response.status + ')' }))
    return
  }
  const spec = await response.json()
  // Markdown rendered by the server, by source text; a text it did not render is shown as it is.
  const rich = (tag, text, properties = {}) =>
    Object.hasOwn(RENDERED, text || '')
      ? element(tag, { ...properties, innerHTML: RENDERED[text] })
      : element(tag, { ...properties, textContent: text || '' })
  const follow = (ref) => ref.slice(2).split('/').reduce((node, key) => node[key], spec)
  const json = (value) => element('pre', { textContent: JSON.stringify(value, null, 2) })
  const payload = (schema) =>
    element('details', {}, element('summary', { textContent: 'payload' }), json(schema))
  const parts = [
    element('h1', { textContent: spec.info.title + ' ' + spec.info.version }),
    element('p', {}, 'AsyncAPI ', element('code', { textContent: spec.asyncapi })),
    rich('div', spec.info.description, { className: 'description' })
  ]
  for (const [key, channel] of Object.entries(spec.channels)) {
    parts.push(element('h2', { id: 'channel-' + key, textContent: channel.address }))
    parts.push(rich('div', channel.description, { className: 'description' }))
    for (const [id, operation] of Object.entries(spec.operations)) {
      if (operation.channel.$ref !== '#/channels/' + key) continue
      const block = element('div', { className: 'operation ' + operation.action, id: 'operation-' + id })
      block.append(
        element('span', { className: 'action', textContent: operation.action === 'send' ? 'client sends' : 'server sends' }),
        element('code', { textContent: operation.messages.map((ref) => follow(ref.$ref).name).join(', ') }),
        rich('div', operation.summary)
      )
      for (const ref of operation.messages) block.append(payload(follow(ref.$ref).payload))
      if (operation.reply) {
        for (const ref of operation.reply.messages) {
          const message = follow(ref.$ref)
          const ack = rich('h3', message.summary)
          ack.prepend('ack: ')
          block.append(ack, payload(message.payload))
        }
      }
      parts.push(block)
    }
  }
  parts.push(element('h2', { id: 'schemas', textContent: 'Schemas' }))
  for (const [name, schema] of Object.entries(spec.components.schemas || {})) {
    parts.push(element('h3', { id: 'schema-' + name, textContent: name }), json(schema))
  }
  main.replaceChildren(...parts)
})()
`

/** Every description (as blocks) and summary (inline) of the document, as HTML by its Markdown source. */
function renderedTexts(document: unknown, into: Record<string, string> = {}): Record<string, string> {
  if (Array.isArray(document)) for (const item of document) renderedTexts(item, into)
  else if (typeof document === 'object' && document !== null) {
    for (const [key, value] of Object.entries(document)) {
      if (typeof value === 'string' && (key === 'description' || key === 'summary')) {
        if (!Object.hasOwn(into, value)) into[value] = markdownToHtml(value, key === 'summary')
      } else renderedTexts(value, into)
    }
  }
  return into
}

/** JSON inside a script element: `<` escaped, so no text can close the element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c')

/** The page for `document` (its Markdown rendered in); `docsHref` leads to the OpenAPI reference page. */
export const asyncApiPage = (docsHref: string, document: unknown) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Real-time API reference</title>
  <link rel="icon" type="image/png" href="${docsHref}favicon-32x32.png">
  <style>
    body { font: 15px/1.5 system-ui, sans-serif; margin: 0 auto; max-width: 960px; padding: 1rem 1.5rem; color: #222 }
    h1 { margin-bottom: 0 } h2 { border-bottom: 1px solid #ddd; margin-top: 2.5rem } h3 { font-size: 1rem }
    .description { color: #444 } .description p { margin: .5rem 0 }
    .operation { border: 1px solid #ddd; border-radius: 4px; margin: .6rem 0; padding: .4rem .8rem }
    .action { display: inline-block; min-width: 8.5rem; font-weight: 600; font-size: .85rem; text-transform: uppercase }
    .send .action { color: #1a6b3c } .receive .action { color: #1d4f91 }
    code, pre { font: 13px/1.4 ui-monospace, monospace; background: #f5f5f5 }
    pre { padding: .5rem; overflow: auto } summary { cursor: pointer; color: #555 }
  </style>
</head>
<body>
  <nav><a href="${docsHref}">REST API reference (OpenAPI)</a> · <a href="asyncapi.json">asyncapi.json</a></nav>
  <main id="asyncapi"><p>Loading asyncapi.json…</p></main>
  <script>const RENDERED = ${scriptJson(renderedTexts(document))}</script>
  <script>${ASYNCAPI_SCRIPT}</script>
</body>
</html>
`
