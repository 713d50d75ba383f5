// The reference Standard Webhooks implementation (npm "standardwebhooks") as an oracle.
//
//   node oracle.js sign COUNT    prints a JSON array of COUNT deliveries signed by the library:
//                                {secret, msg_id, timestamp, payload_base64, signature}
//   node oracle.js verify FILE   reads such an array (signed by someone else, timestamps near
//                                now) and prints a JSON array of booleans: did the library accept
//                                each one?
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const { Webhook } = require('standardwebhooks');

function randomInt(min, max) {
  return min + crypto.randomInt(max - min + 1);
}

// A payload with ASCII, multi-byte UTF-8 and JSON punctuation, as a publisher might send.
function randomPayload() {
  const alphabet = ['a', 'Z', '0', ' ', '"', '\\', '{', '}', ':', ',', '.', 'é', '€', '😂', '\n'];
  let text = '';
  const length = randomInt(0, 200);
  for (let i = 0; i < length; i++) {
    text += alphabet[crypto.randomInt(alphabet.length)];
  }
  return JSON.stringify({ id: crypto.randomUUID(), content: text });
}

function sign(count) {
  const deliveries = [];
  for (let i = 0; i < count; i++) {
    const secret = 'whsec_' + crypto.randomBytes(randomInt(24, 64)).toString('base64');
    const msgId = 'msg_' + crypto.randomBytes(randomInt(4, 24)).toString('hex');
    const timestamp = randomInt(1500000000, 2000000000);
    const payload = randomPayload();
    const signature = new Webhook(secret).sign(msgId, new Date(timestamp * 1000), payload);
    deliveries.push({
      secret,
      msg_id: msgId,
      timestamp,
      payload_base64: Buffer.from(payload, 'utf8').toString('base64'),
      signature,
    });
  }
  return deliveries;
}

function verify(file) {
  const deliveries = JSON.parse(fs.readFileSync(file, 'utf8'));
  return deliveries.map((d) => {
    try {
      new Webhook(d.secret).verify(Buffer.from(d.payload_base64, 'base64').toString('utf8'), {
        'webhook-id': d.msg_id,
        'webhook-timestamp': String(d.timestamp),
        'webhook-signature': d.signature,
      }, { jsonParse: false });
      return true;
    } catch (e) {
      return false;
    }
  });
}

const [command, argument] = process.argv.slice(2);
if (command === 'sign') {
  process.stdout.write(JSON.stringify(sign(Math.min(Number(argument), 50))) + '\n');
} else if (command === 'verify') {
  process.stdout.write(JSON.stringify(verify(argument)) + '\n');
} else {
  process.stderr.write('usage: node oracle.js sign COUNT | verify FILE\n');
  process.exit(2);
}
