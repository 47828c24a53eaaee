export { LiveQueries, type LiveQueriesOptions, type WatchAnswer, type WatchRequest } from './live-queries.js'
export type { LiveFrame } from './live-view.js'
