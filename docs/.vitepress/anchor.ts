/**
 * GitHub's anchor for a heading (lower case, punctuation dropped, spaces as hyphens), so that a `#fragment`
 * means the same on GitHub, on the site (config.ts slugifies headings with it) and in test/docs/links.test.ts.
 */
export function githubAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')
}
