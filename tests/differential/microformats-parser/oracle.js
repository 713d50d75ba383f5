// The reference microformats2 parser (npm "microformats-parser") as an oracle.
//
//   node oracle.js LIST   LIST is a JSON array of {"file": PATH, "base_url": URL}; prints a JSON
//                         array, one entry per case in order: {"result": {items, rels,
//                         rel-urls}} or {"error": MESSAGE} when the parser throws.
'use strict';

const fs = require('fs');
const { mf2 } = require('microformats-parser');

const cases = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const out = cases.map(({ file, base_url: baseUrl }) => {
  try {
    return { result: mf2(fs.readFileSync(file, 'utf8'), { baseUrl }) };
  } catch (error) {
    return { error: String(error && error.message ? error.message : error) };
  }
});
process.stdout.write(JSON.stringify(out));
