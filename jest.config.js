import { availableParallelism } from 'node:os'

/**
 * ESM end to end: ts-jest's default-esm preset under NODE_OPTIONS=--experimental-vm-modules.
 * Two workers at least, also on 2 cores: the slowest suites mostly wait on processes they start (a docs build, a
 * type-check of a copied repository, servers), so a second worker fills the idle core; CI stays under 15 minutes.
 */
export default {
  maxWorkers: Math.max(2, availableParallelism() - 1),
  preset: 'ts-jest/presets/default-esm',
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json', diagnostics: { warnOnly: false } }]
  },
  setupFiles: ['reflect-metadata'],
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  testTimeout: 30000
}
