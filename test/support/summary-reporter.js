/**
 * Prints the ten slowest suites (CI must stay under 15 minutes: this says where the time goes), then the closing
 * line CI reads: `N passed, N failed` (+ `, N skipped`). Jest's own summary stays above it. Suites that crash
 * before running count as one failure each.
 */
export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites
    const skipped = results.numPendingTests + results.numTodoTests
    const slowest = results.testResults
      .map((suite) => ({ path: suite.testFilePath, s: (suite.perfStats.end - suite.perfStats.start) / 1000 }))
      .sort((a, b) => b.s - a.s)
      .slice(0, 10)
    if (slowest.length > 1) {
      const cwd = process.cwd() + '/'
      process.stdout.write(
        `\nslowest suites:\n${slowest.map((suite) => `  ${suite.s.toFixed(0).padStart(4)} s  ${suite.path.replace(cwd, '')}`).join('\n')}\n`
      )
    }
    const line = `${results.numPassedTests} passed, ${failed} failed` + (skipped > 0 ? `, ${skipped} skipped` : '')
    process.stdout.write(`\n${line}\n`)
  }
}
