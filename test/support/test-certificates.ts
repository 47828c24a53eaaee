import { execFile, spawnSync } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

/*
 * Certificates made for one test run with the `openssl` command line (Debian's): a CA, a server
 * certificate it signed for the name `rethinkdb.test` only (so connecting to 127.0.0.1 needs the
 * server name), a client certificate it signed, and an unrelated CA. Files in a temp folder.
 */

export const OPENSSL = spawnSync('openssl', ['version']).status === 0

export const SERVER_NAME = 'rethinkdb.test'

export interface TestCertificates {
  /** PEM files: the CA, the server's certificate and key, a client's certificate and key, another CA. */
  ca: string
  serverCert: string
  serverKey: string
  clientCert: string
  clientKey: string
  otherCa: string
  remove(): Promise<void>
}

export async function makeCertificates(): Promise<TestCertificates> {
  const folder = await mkdtemp(join(tmpdir(), 'plumage-certs-'))
  const path = (name: string) => join(folder, name)
  const openssl = (...args: string[]) => promisify(execFile)('openssl', args, { cwd: folder })
  const newKey = ['-newkey', 'rsa:2048', '-nodes']
  const signed = async (name: string, subject: string, extensions?: string) => {
    await openssl('req', ...newKey, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject)
    if (extensions) await writeFile(path(`${name}.ext`), `${extensions}\n`)
    await openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '2',
      '-out',
      `${name}.pem`,
      ...(extensions ? ['-extfile', `${name}.ext`] : [])
    )
  }
  await openssl(
    'req',
    '-x509',
    ...newKey,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=plumage test CA'
  )
  await openssl(
    'req',
    '-x509',
    ...newKey,
    '-keyout',
    'other.key',
    '-out',
    'other.pem',
    '-days',
    '2',
    '-subj',
    '/CN=an unrelated CA'
  )
  await signed('server', `/CN=${SERVER_NAME}`, `subjectAltName=DNS:${SERVER_NAME}`)
  await signed('client', '/CN=plumage')
  return {
    ca: path('ca.pem'),
    serverCert: path('server.pem'),
    serverKey: path('server.key'),
    clientCert: path('client.pem'),
    clientKey: path('client.key'),
    otherCa: path('other.pem'),
    remove: () => rm(folder, { recursive: true, force: true })
  }
}
