import { createServer } from 'node:net'

/**
 * A stand-in driver port that refuses every login as RethinkDB 2.4 does: the V1_0 handshake, one
 * SCRAM-SHA-256 round, then "Wrong password" (error code 12). Records the user names it was sent.
 */
export async function refusingServer(): Promise<{ port: number; users: string[]; close(): void }> {
  const users: string[] = []
  const server = createServer((socket) => {
    let buffer = Buffer.alloc(0)
    let step = 0
    const send = (message: object) => socket.write(`${JSON.stringify(message)}\0`)
    socket.on('error', () => undefined)
    socket.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk])
      if (step === 0 && buffer.length >= 4) {
        buffer = buffer.subarray(4)
        step = 1
        send({ success: true, min_protocol_version: 0, max_protocol_version: 0, server_version: '2.4.4' })
      }
      for (let end = buffer.indexOf(0); end >= 0; end = buffer.indexOf(0)) {
        const { authentication } = JSON.parse(buffer.subarray(0, end).toString()) as { authentication: string }
        buffer = buffer.subarray(end + 1)
        if (step === 1) {
          step = 2
          users.push(/n=([^,]*)/.exec(authentication)![1]!)
          send({ success: true, authentication: `r=${/r=([^,]*)/.exec(authentication)![1]}stand-in,s=${Buffer.from('salt').toString('base64')},i=4096` })
        } else {
          send({ success: false, error: 'Wrong password', error_code: 12 })
          socket.end()
        }
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { port: (server.address() as { port: number }).port, users, close: () => server.close() }
}
