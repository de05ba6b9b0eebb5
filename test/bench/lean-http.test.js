// The transfer runs' lean HTTP/1.1 client (bench/lib/lean-http.js) against a node:http server on
// loopback: answers split across packets, chunked answers, kept-alive reuse, `Connection: close`, and
// the answers it refuses rather than misreads.

import assert from 'node:assert/strict'
import http from 'node:http'
import { after, before, test } from 'node:test'
import { LeanHttpClient } from '../../bench/lib/lean-http.js'

let server
let url
const sockets = new Set()
// connections the server has accepted so far
let accepted = 0

before(async () => {
  server = http.createServer((req, res) => {
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString()
      const { mode } = JSON.parse(body)
      if (mode === 'echo') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
        res.end(body)
      } else if (mode === 'split') {
        // the head, then the body in three writes with pauses: the client reassembles them
        const answer = Buffer.from(JSON.stringify({ parts: 'x'.repeat(40_000) }))
        res.writeHead(201, { 'content-length': answer.length })
        res.flushHeaders()
        let at = 0
        const step = () => {
          const part = answer.subarray(at, at + 15_000)
          at += part.length
          if (at < answer.length) {
            res.write(part)
            setTimeout(step, 5)
          } else res.end(part)
        }
        setTimeout(step, 5)
      } else if (mode === 'close') {
        res.writeHead(200, { connection: 'close', 'content-length': 2 })
        res.end('{}')
      } else if (mode === 'chunked') {
        // node:http sends a body without a length in chunks: here three, the last after a pause
        res.writeHead(200, { 'content-type': 'application/json' })
        res.write('{"a":')
        res.write(`"${'y'.repeat(70_000)}",`)
        setTimeout(() => res.end('"b":1}'), 5)
      } else if (mode === 'gzip-chunked') {
        res.writeHead(200, { 'transfer-encoding': 'gzip, chunked' })
        res.end('{}')
      } else if (mode === 'hang-up') {
        req.socket.destroy()
      }
    })
  })
  server.on('connection', (s) => {
    accepted++
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${server.address().port}/`
})

after(async () => {
  for (const s of sockets) s.destroy()
  await new Promise((resolve) => server.close(resolve))
})

test('answers come back whole, over one kept-alive connection a caller', async () => {
  const client = new LeanHttpClient(url)
  const acceptedBefore = accepted
  try {
    for (let i = 0; i < 20; i++) {
      const body = JSON.stringify({ mode: 'echo', i, text: 'é✓' })
      const { status, bytes } = await client.post(body)
      assert.equal(status, 200)
      assert.equal(bytes.toString(), body)
    }
    assert.equal(accepted - acceptedBefore, 1)
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => client.post(JSON.stringify({ mode: 'echo', i }))))
    assert.deepEqual(answers.map((a) => JSON.parse(a.bytes.toString()).i), [0, 1, 2, 3, 4, 5, 6, 7])
    assert.equal(accepted - acceptedBefore, 8, 'eight callers at once: the idle connection and seven more')
  } finally {
    client.close()
  }
})

test('an answer split across packets is read to its content-length', async () => {
  const client = new LeanHttpClient(url)
  try {
    const { status, bytes } = await client.post(JSON.stringify({ mode: 'split' }))
    assert.equal(status, 201)
    assert.equal(JSON.parse(bytes.toString()).parts.length, 40_000)
    const again = await client.post(JSON.stringify({ mode: 'echo', n: 1 }))
    assert.equal(JSON.parse(again.bytes.toString()).n, 1)
  } finally {
    client.close()
  }
})

test('Connection: close is honoured: the next request opens a new connection', async () => {
  const client = new LeanHttpClient(url)
  const acceptedBefore = accepted
  try {
    assert.equal((await client.post(JSON.stringify({ mode: 'close' }))).bytes.toString(), '{}')
    assert.equal((await client.post(JSON.stringify({ mode: 'echo' }))).status, 200)
    assert.equal(accepted - acceptedBefore, 2)
  } finally {
    client.close()
  }
})

test('a chunked answer is read whole, and the connection serves the next request', async () => {
  const client = new LeanHttpClient(url)
  const acceptedBefore = accepted
  try {
    const { status, bytes } = await client.post(JSON.stringify({ mode: 'chunked' }))
    assert.equal(status, 200)
    const answer = JSON.parse(bytes.toString())
    assert.equal(answer.a.length, 70_000)
    assert.equal(answer.b, 1)
    assert.equal((await client.post(JSON.stringify({ mode: 'echo', after: 1 }))).status, 200)
    assert.equal(accepted - acceptedBefore, 1)
  } finally {
    client.close()
  }
})

test('another transfer coding and a hung-up connection fail the request, and the client goes on', async () => {
  const client = new LeanHttpClient(url)
  try {
    await assert.rejects(client.post(JSON.stringify({ mode: 'gzip-chunked' })), /unsupported transfer-encoding: gzip, chunked/)
    await assert.rejects(client.post(JSON.stringify({ mode: 'hang-up' })), /closed the connection/)
    assert.equal((await client.post(JSON.stringify({ mode: 'echo', ok: true }))).status, 200)
  } finally {
    client.close()
  }
})

test('only plain HTTP URLs are taken', () => {
  assert.throws(() => new LeanHttpClient('https://127.0.0.1:1/'), /plain HTTP only/)
})
