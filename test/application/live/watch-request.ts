import type { LiveFrame, LiveQueries, WatchAnswer, WatchRequest } from '../../../src/application/live/index.js'

/** What a watch started through `live.watch` was answered, and everything sent to it since (kept up to date). */
export interface Watched {
  answer: WatchAnswer
  /** The `live` frames of the watch (with an id). */
  frames: LiveFrame[]
  /** Everything sent, progress frames (`{ offset }`) included. */
  sent: (LiveFrame | { offset: string })[]
}

/** Starts a watch as a transport would, recording its answer and what it is sent. */
export async function watchWith(live: LiveQueries, request: Omit<WatchRequest, 'send' | 'answer'>): Promise<Watched> {
  const watched = { frames: [], sent: [] } as unknown as Watched
  await live.watch({
    ...request,
    send: (frame) => {
      watched.sent.push(frame)
      if ('id' in frame) watched.frames.push(frame)
    },
    answer: (given) => void (watched.answer = given)
  })
  return watched
}
