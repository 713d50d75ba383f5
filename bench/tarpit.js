// Tarpit origins for bench/verify: answers every request with 200 text/html and then trickles
// the body at RATE bytes per second, forever (until the client gives up), so that each fetch of it
// stays in flight as long as the fetcher allows. Listens on HOSTS loopback addresses 127.1.0.1,
// 127.1.0.2, … (the fetcher limits fetches per address, so many tarpits need many addresses).
// Node's own http only: nothing to install.
// Usage: node tarpit.js HOSTS PORT [RATE]. Prints "listening" once ready, then open responses;
// http://127.0.0.1:PORT/open answers how many are open now (for the bench, not a tarpit).
'use strict';
const http = require('http');

const [hosts, port, rate = '2048'] = process.argv.slice(2).map(Number);
if (!(hosts >= 1 && hosts <= 2500) || !port) {
  console.error('usage: node tarpit.js HOSTS(1..2500) PORT [BYTES_PER_SECOND]');
  process.exit(2);
}
const chunk = Buffer.alloc(Math.max(1, Math.floor(rate / 10)), 'a');
let open = 0;

function handle(request, response) {
  open++;
  response.writeHead(200, { 'Content-Type': 'text/html' });
  response.write('<!doctype html><html><body><p>');
  const timer = setInterval(() => response.write(chunk), 100);
  response.on('close', () => { clearInterval(timer); open--; });
}

// 127.1.0.1 … 127.1.0.250, 127.1.1.1 …: loopback only.
const address = (i) => `127.1.${Math.floor(i / 250)}.${1 + (i % 250)}`;
let listening = 0;
http.createServer((request, response) => response.end(`${open}\n`)).listen(port, '127.0.0.1', () => {
  if (++listening === hosts + 1) console.log('listening');
});
for (let i = 0; i < hosts; i++) {
  http.createServer(handle).listen(port, address(i), () => {
    if (++listening === hosts + 1) console.log('listening');
  });
}
setInterval(() => console.log(`open=${open}`), 1000).unref();
