import { describe } from '@jest/globals'
import { existsSync } from 'node:fs'

/** Debian's Chromium (apt-get install -y chromium); browser suites never download one. */
export const CHROMIUM = '/usr/bin/chromium'
export const chromiumAvailable = existsSync(CHROMIUM)

/** `describe` when Chromium is installed; otherwise `describe.skip`, after one loud line saying why. */
export function withChromium(name: string, suite: () => void): void {
  if (chromiumAvailable) return describe(name, suite)
  console.warn(`Browser test SKIPPED: ${CHROMIUM} not found (install it with apt-get install -y chromium)`)
  describe.skip(name, suite)
}
