import { describe, expect, it } from '@jest/globals'
import { markdownToHtml } from '../../../src/interfaces/api-docs/markdown.js'

describe('the Markdown of API descriptions', () => {
  it('renders code and joins hard-wrapped lines into one paragraph', () => {
    expect(markdownToHtml('Call `create`\non the service.\n\nThen listen.')).toBe(
      '<p>Call <code>create</code>\non the service.</p>\n<p>Then listen.</p>'
    )
    expect(markdownToHtml('The ack: `(null, result)`', true)).toBe('The ack: <code>(null, result)</code>')
  })

  it('shows raw HTML as text and keeps only safe links', () => {
    expect(markdownToHtml('<script>alert(1)</script>')).not.toContain('<script')
    expect(markdownToHtml('a <img src=x onerror=alert(1)> b', true)).toBe('a &lt;img src=x onerror=alert(1)&gt; b')
    expect(markdownToHtml('[bad](javascript:alert(1)) [good](https://feathersjs.com)', true)).toBe(
      'bad <a href="https://feathersjs.com">good</a>'
    )
  })
})
