'use strict';
// IPv4 and IPv6 prefixes as integer ranges (BigInt), compared as numbers, never as strings.

function parseIPv4(text) {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0n;
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    value = (value << 8n) | BigInt(n);
  }
  return value;
}

function parseIPv6(text) {
  if (!/^[0-9a-fA-F:.]+$/.test(text)) return null;
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (half) => {
    if (half === '') return [];
    const out = [];
    const items = half.split(':');
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (i === items.length - 1 && item.includes('.')) {
        const v4 = parseIPv4(item);
        if (v4 === null) return null;
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(item)) return null;
        out.push(parseInt(item, 16));
      }
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (head === null || tail === null) return null;
  let all;
  if (halves.length === 2) {
    const missing = 8 - head.length - tail.length;
    if (missing < 1) return null;
    all = [...head, ...new Array(missing).fill(0), ...tail];
  } else {
    all = head;
  }
  if (all.length !== 8) return null;
  return all.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

// Parses "a.b.c.d/n", "x:y::/n", or a bare address (a /32 or /128). Returns
// {family: 4|6, first, last, bits, prefix, text} or null. Host bits must be zero.
function parseCidr(text) {
  const [addr, len, ...rest] = String(text).trim().split('/');
  if (rest.length) return null;
  let family;
  let value = parseIPv4(addr);
  if (value !== null) family = 4;
  else {
    value = parseIPv6(addr);
    if (value === null) return null;
    family = 6;
  }
  const bits = family === 4 ? 32 : 128;
  let prefix = bits;
  if (len !== undefined) {
    if (!/^[0-9]{1,3}$/.test(len)) return null;
    prefix = Number(len);
    if (prefix > bits) return null;
  }
  const hostBits = BigInt(bits - prefix);
  const first = (value >> hostBits) << hostBits;
  if (first !== value) return null;
  const last = first + (1n << hostBits) - 1n;
  return { family, first, last, bits, prefix, text: String(text).trim() };
}

function contains(outer, inner) {
  return outer.family === inner.family && outer.first <= inner.first && inner.last <= outer.last;
}

function overlaps(a, b) {
  return a.family === b.family && a.first <= b.last && b.first <= a.last;
}

// The ranges of `family` not covered by `cidr`: [{family, first, last}], as plain intervals.
function complement(cidr) {
  const max = (1n << BigInt(cidr.bits)) - 1n;
  const out = [];
  if (cidr.first > 0n) out.push({ family: cidr.family, first: 0n, last: cidr.first - 1n, text: `below ${cidr.text}` });
  if (cidr.last < max) out.push({ family: cidr.family, first: cidr.last + 1n, last: max, text: `above ${cidr.text}` });
  return out;
}

// Is every address of `range` outside `allowed` or inside one of `excepts`? Returns the
// sub-interval that stays allowed, or null when none does.
function firstAllowedPart(range, allowed, excepts) {
  if (!overlaps(range, allowed)) return null;
  let lo = range.first > allowed.first ? range.first : allowed.first;
  const hi = range.last < allowed.last ? range.last : allowed.last;
  const sorted = excepts.filter((e) => e.family === range.family).sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
  for (const e of sorted) {
    if (e.last < lo) continue;
    if (e.first > lo) break;
    lo = e.last + 1n;
    if (lo > hi) return null;
  }
  return lo <= hi ? { first: lo, last: hi } : null;
}

function formatAddress(family, value) {
  if (family === 4) {
    return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 255n)).join('.');
  }
  const groups = [];
  for (let s = 112n; s >= 0n; s -= 16n) groups.push(((value >> s) & 0xffffn).toString(16));
  return groups.join(':');
}

module.exports = { parseIPv4, parseIPv6, parseCidr, contains, overlaps, complement, firstAllowedPart, formatAddress };
