import { expect } from '@jest/globals'
import type { ChaosReport } from './chaos-harness.js'

/** The assertions of a chaos run of plumage's client: nothing lost, nothing doubled, every view converged. */
export function expectExactlyOnce(report: ChaosReport, clients: number): void {
  expect({ lost: report.examples.lost, doubled: report.examples.doubled, failed: report.examples.failed }).toEqual({
    lost: [],
    doubled: [],
    failed: []
  })
  expect(report.hung).toBe(0)
  expect(report.expiredSessions).toBe(0)
  expect(report.rows).toBe(report.writes)
  expect(report.converged).toBe(clients)
  // The chaos happened: duplicate sends, drops, and a kill that fell between a commit and its reply.
  expect(report.duplicateSends).toBeGreaterThan(0)
  expect(report.drops).toBeGreaterThan(0)
  expect(report.kills).toBeGreaterThan(0)
  expect(report.committedUnanswered).toBeGreaterThan(0)
}
