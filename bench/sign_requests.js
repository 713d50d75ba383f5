// Writes N signed feed items for bench/load's "ingest signed v1a" row, one per line:
// "webhook-id<TAB>webhook-timestamp<TAB>X-Provenance-Signature<TAB>body". Items are synthetic
// (so only a valid signature gets them accepted), 300 bytes like the other ingest rows, and
// signed as Standard Webhooks v1a (Ed25519 over `id.timestamp.body`) with a fresh key whose
// public half is printed on stdout as `whpk_<base64>` for `portcullis publisher key-add`.
// Node's own crypto only: nothing to install. Usage: node sign_requests.js N OUT_FILE
'use strict';
const crypto = require('crypto');
const fs = require('fs');

const count = Number(process.argv[2]);
const out = process.argv[3];
if (!Number.isInteger(count) || count < 1 || count > 2000000 || !out) {
  console.error('usage: node sign_requests.js N(1..2000000) OUT_FILE');
  process.exit(2);
}

const { publicKey, privateKey } = crypto.generateKeyPairSync('ed25519');
const rawPublic = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
const timestamp = Math.floor(Date.now() / 1000).toString();
const salt = crypto.randomBytes(6).toString('hex');
const head = '{"id":"';
const mid = '","content":"';
const tail = '","is_synthetic":true,"metadata":{"source":"bench","lang":"en"}}';

const fd = fs.openSync(out, 'w');
let chunk = [];
for (let i = 0; i < count; i++) {
  const id = `${salt}-${i}`;
  const body = head + id + mid + 'x'.repeat(Math.max(0, 300 - head.length - id.length - mid.length - tail.length)) + tail;
  const msgId = `msg_${id}`;
  const signature = crypto.sign(null, Buffer.from(`${msgId}.${timestamp}.${body}`), privateKey);
  chunk.push(`${msgId}\t${timestamp}\tv1a,${signature.toString('base64')}\t${body}\n`);
  if (chunk.length === 10000) { fs.writeSync(fd, chunk.join('')); chunk = []; }
}
fs.writeSync(fd, chunk.join(''));
fs.closeSync(fd);
process.stdout.write(`whpk_${rawPublic.toString('base64')}\n`);
