import { Marked } from 'marked'

/*
 * The Markdown of the API documents' descriptions and summaries (backticks, paragraphs, lists), as
 * HTML for the AsyncAPI page. The text is the app's own, but it is still kept from injecting markup:
 * raw HTML in it is shown as text, and only http(s), mailto and relative links become links.
 */

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (character) => ENTITIES[character]!)

const SAFE_LINK = /^(https?:|mailto:|[#/.?]|[^:]*$)/i

const markdown = new Marked({ gfm: true }).use({
  renderer: {
    html: ({ text }) => escapeHtml(text),
    link({ href, tokens }) {
      // false: marked's own rendering of the link.
      return SAFE_LINK.test(href) ? false : this.parser.parseInline(tokens)
    }
  }
})

/** `text` as HTML: paragraphs and blocks, or (`inline`) a single line's inline markup. */
export function markdownToHtml(text: string, inline = false): string {
  return (inline ? markdown.parseInline(text, { async: false }) : markdown.parse(text, { async: false })).trim()
}
