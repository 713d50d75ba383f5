'use strict';
// Reads the refused address blocks out of SSRF-POLICY.md: every IPv4 prefix in the section
// "IPv4 blocks refused", every IPv6 prefix or address in backticks in "IPv6 blocks refused", and
// "Outside X everything is refused" as the complement of X.
const { parseCidr, complement } = require('./cidr');

function section(markdown, heading) {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => /^##\s/.test(l) && l.toLowerCase().includes(heading.toLowerCase()));
  if (start < 0) return null;
  const out = [];
  for (let i = start + 1; i < lines.length && !/^##\s/.test(lines[i]); i++) out.push(lines[i]);
  return out.join('\n');
}

function parseSsrfPolicy(markdown) {
  const ranges = [];
  const v4 = section(markdown, 'IPv4 blocks refused');
  const v6 = section(markdown, 'IPv6 blocks refused');
  if (v4 === null || v6 === null) {
    throw new Error('SSRF policy: sections "IPv4 blocks refused" and "IPv6 blocks refused" not found');
  }
  for (const m of v4.matchAll(/\b(\d{1,3}(?:\.\d{1,3}){3}\/\d{1,2})\b/g)) {
    const c = parseCidr(m[1]);
    if (!c) throw new Error(`SSRF policy: cannot parse ${m[1]}`);
    ranges.push(c);
  }
  let envelope = null;
  const outside = v6.match(/Outside\s+`?([0-9a-fA-F:]+\/\d+)`?\s+everything is refused/);
  if (outside) {
    envelope = parseCidr(outside[1]);
    if (!envelope) throw new Error(`SSRF policy: cannot parse ${outside[1]}`);
    for (const part of complement(envelope)) ranges.push({ ...part, bits: 128, text: `outside ${envelope.text} (${part.text})` });
  }
  for (const m of v6.matchAll(/`([^`]+)`/g)) {
    const token = m[1].trim();
    if (!token.includes(":")) continue;
    if (envelope && token === envelope.text) continue;
    const c = parseCidr(token);
    if (c) ranges.push(c);
  }
  if (ranges.filter((r) => r.family === 4).length === 0 || ranges.filter((r) => r.family === 6).length === 0) {
    throw new Error('SSRF policy: no IPv4 or no IPv6 ranges found');
  }
  return { ranges, envelope };
}

module.exports = { parseSsrfPolicy };
