// Verifies a Standard Webhooks v1a (Ed25519) signature with Node's own crypto, independently of
// the verifier's OpenSSL code: the npm `standardwebhooks` package verifies v1 only.
//
//   node delivery_v1a_verify.js WHPK_KEY BODY_FILE WEBHOOK_ID TIMESTAMP SIGNATURE_HEADER
//       prints true when any v1a token of SIGNATURE_HEADER verifies over
//       "WEBHOOK_ID.TIMESTAMP.BODY" under the public key.
'use strict';

const crypto = require('crypto');
const fs = require('fs');

const [whpk, file, id, timestamp, header] = process.argv.slice(2);
if (!whpk || !whpk.startsWith('whpk_') || !header) {
  process.stderr.write('usage: node delivery_v1a_verify.js WHPK BODY_FILE ID TIMESTAMP HEADER\n');
  process.exit(2);
}
const raw = Buffer.from(whpk.slice('whpk_'.length), 'base64');
// SubjectPublicKeyInfo of an Ed25519 key: a fixed 12-byte prefix, then the 32 key bytes.
const key = crypto.createPublicKey({
  key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw]),
  format: 'der',
  type: 'spki',
});
const content = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), fs.readFileSync(file)]);
const ok = header.split(' ').some((token) => {
  const [version, signature] = token.split(',');
  return version === 'v1a' && signature !== undefined &&
      crypto.verify(null, content, key, Buffer.from(signature, 'base64'));
});
process.stdout.write(ok ? 'true\n' : 'false\n');
