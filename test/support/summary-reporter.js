/**
 * Prints the closing line CI reads: `N passed, N failed` (+ `, N skipped`). Jest's own summary
 * stays above it. Suites that crash before running count as one failure each.
 */
export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites
    const skipped = results.numPendingTests + results.numTodoTests
    const line = `${results.numPassedTests} passed, ${failed} failed` + (skipped > 0 ? `, ${skipped} skipped` : '')
    process.stdout.write(`\n${line}\n`)
  }
}
