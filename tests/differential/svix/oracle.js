// The Svix library (npm "svix") signing deliveries the way Svix sends them.
//
//   node oracle.js sign SECRET MSG_ID UNIX_SECONDS FILE
//       prints the headers of a delivery of FILE's bytes, as Svix sends them — svix-id,
//       svix-timestamp, svix-signature and no other provenance header — one "name: value" a line
//       (curl -H @file reads that), signed by the library's Webhook.sign.
//   node oracle.js verify SECRET FILE HEADERS_JSON
//       prints true when the library's Webhook.verify accepts FILE's bytes with those headers.
'use strict';

const fs = require('fs');
const { Webhook } = require('svix');

function sign(secret, msgId, seconds, file) {
  const payload = fs.readFileSync(file, 'utf8');
  const signature = new Webhook(secret).sign(msgId, new Date(Number(seconds) * 1000), payload);
  return `svix-id: ${msgId}\nsvix-timestamp: ${seconds}\nsvix-signature: ${signature}\n`;
}

function verify(secret, file, headersJson) {
  try {
    new Webhook(secret).verify(fs.readFileSync(file, 'utf8'), JSON.parse(headersJson));
    return 'true\n';
  } catch (e) {
    return 'false\n';
  }
}

const [command, ...args] = process.argv.slice(2);
if (command === 'sign' && args.length === 4) {
  process.stdout.write(sign(...args));
} else if (command === 'verify' && args.length === 3) {
  process.stdout.write(verify(...args));
} else {
  process.stderr.write('usage: oracle.js sign SECRET MSG_ID UNIX_SECONDS FILE | verify SECRET FILE HEADERS_JSON\n');
  process.exit(2);
}
