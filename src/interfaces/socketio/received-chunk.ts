import type { Socket } from 'socket.io'

/** The ws receiver under engine.io's websocket transport: the mask of the last frame it read. */
type Receiver = { _mask?: Buffer }

/**
 * Lets go of the TCP chunk a socket's last message arrived in. ws keeps the mask of the last frame it read
 * (`Receiver._mask`) as a 4-byte view into that chunk, so an idle socket kept its last message's whole chunk
 * (up to 64 KB): its login's ~0.4 KB in bench:socket-heap, a large create's more. A copy of the 4 bytes, from
 * Node's shared pool, serves ws just as well whenever it reads the mask again.
 */
export function releaseReceivedChunk(socket: Socket): void {
  const transport = socket.conn.transport as { name?: string; socket?: { _receiver?: Receiver } }
  const receiver = transport.name === 'websocket' ? transport.socket?._receiver : undefined
  const mask = receiver?._mask
  if (mask !== undefined && mask.buffer.byteLength > mask.length) receiver!._mask = Buffer.from(mask)
}
