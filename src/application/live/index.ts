export { LiveQueries, type LiveQueriesOptions } from './live-queries.js'
export type { WatchAnswer, WatchRequest } from './watch-options.js'
export type { LiveFrame } from './live-view.js'
