'use strict';
// The pieces under the checks: CIDR arithmetic, the SSRF policy reader, the JSON patch and image
// rules of the built-in renderer, duration parsing, the Dockerfile reader.
const test = require('node:test');
const assert = require('node:assert');
const { parseCidr, firstAllowedPart, complement } = require('../lib/cidr');
const { parseSsrfPolicy } = require('../lib/ssrf-policy');
const { applyJsonPatch, splitImage } = require('../lib/kustomize');
const { parseDuration } = require('../lib/assertions');
const { parseDockerfile, stages, portcullisPackages } = require('../lib/dockerfile');

test('CIDRs parse as integer ranges, host bits must be zero', () => {
  const a = parseCidr('169.254.0.0/16');
  assert.strictEqual(a.first, 0xa9fe0000n);
  assert.strictEqual(a.last, 0xa9feffffn);
  assert.strictEqual(parseCidr('169.254.1.0/16'), null);
  assert.strictEqual(parseCidr('256.0.0.0/8'), null);
  assert.strictEqual(parseCidr('01.0.0.0/8'), null);
  const v6 = parseCidr('2001:db8::/32');
  assert.strictEqual(v6.family, 6);
  assert.strictEqual(v6.first, 0x20010db8n << 96n);
  assert.strictEqual(parseCidr('::ffff:0:0/96').first, 0xffffn << 32n);
  assert.strictEqual(parseCidr('::1').prefix, 128);
  assert.strictEqual(parseCidr('::ffff:127.0.0.1').last, (0xffffn << 32n) | 0x7f000001n);
  assert.strictEqual(parseCidr('1:2:3:4:5:6:7:8:9'), null);
});

test('firstAllowedPart: fully excepted ranges are null, holes are found', () => {
  const all = parseCidr('0.0.0.0/0');
  const tenEight = parseCidr('10.0.0.0/8');
  assert.strictEqual(firstAllowedPart(tenEight, all, [parseCidr('10.0.0.0/8')]), null);
  assert.strictEqual(firstAllowedPart(tenEight, all, [parseCidr('10.0.0.0/9'), parseCidr('10.128.0.0/9')]), null);
  const hole = firstAllowedPart(tenEight, all, [parseCidr('10.0.0.0/9')]);
  assert.strictEqual(hole.first, 0x0a800000n);
  assert.strictEqual(firstAllowedPart(tenEight, parseCidr('2000::/3'), []), null, 'other family never overlaps');
  const [below, above] = complement(parseCidr('2000::/3'));
  assert.strictEqual(below.last, (0x2000n << 112n) - 1n);
  assert.strictEqual(above.first, 0x4000n << 112n);
});

test('the SSRF policy reader finds both tables and the 2000::/3 rule', () => {
  const policy = parseSsrfPolicy(`## IPv4 blocks refused
| 10.0.0.0/8 | x |
| 192.0.2.0/24, 198.51.100.0/24 | docs |
## IPv6 blocks refused
Outside 2000::/3 everything is refused — \`fc00::/7\` and \`::1\`; also \`2001:db8::/32\`.
## Before DNS
93.184.216.34 is not a refused block.
`);
  const texts = policy.ranges.map((r) => r.text);
  assert.deepStrictEqual(texts.filter((t) => !t.startsWith('outside')), ['10.0.0.0/8', '192.0.2.0/24', '198.51.100.0/24', 'fc00::/7', '::1', '2001:db8::/32']);
  assert.strictEqual(texts.filter((t) => t.startsWith('outside 2000::/3')).length, 2);
  assert.throws(() => parseSsrfPolicy('# nothing here'), /sections/);
});

test('JSON patch add/replace/remove/test as RFC 6902', () => {
  const doc = { spec: { a: 1, list: [1, 2], 'x/y': { '~': 0 } } };
  applyJsonPatch(doc, [
    { op: 'replace', path: '/spec/a', value: 2 },
    { op: 'add', path: '/spec/list/-', value: 3 },
    { op: 'add', path: '/spec/list/0', value: 0 },
    { op: 'remove', path: '/spec/x~1y/~0' },
    { op: 'test', path: '/spec/a', value: 2 },
  ]);
  assert.deepStrictEqual(doc, { spec: { a: 2, list: [0, 1, 2, 3], 'x/y': {} } });
  assert.throws(() => applyJsonPatch(doc, [{ op: 'replace', path: '/spec/missing', value: 1 }]), /does not exist/);
  assert.throws(() => applyJsonPatch(doc, [{ op: 'move', from: '/a', path: '/b' }]), /not supported/);
});

test('image references split like kustomize does', () => {
  assert.deepStrictEqual(splitImage('registry:5000/a/b:1.0@sha256:abc'), { name: 'registry:5000/a/b', tag: '1.0', digest: 'sha256:abc' });
  assert.deepStrictEqual(splitImage('registry:5000/a/b'), { name: 'registry:5000/a/b', tag: undefined, digest: undefined });
});

test('absl durations', () => {
  assert.strictEqual(parseDuration('10s'), 10);
  assert.strictEqual(parseDuration('1m30s'), 90);
  assert.strictEqual(parseDuration('250ms'), 0.25);
  assert.strictEqual(parseDuration('0'), 0);
  assert.ok(Number.isNaN(parseDuration('10')));
  assert.ok(Number.isNaN(parseDuration('10 s')));
});

test('Dockerfile reader: continuations, comments, ARG defaults in FROM', () => {
  const text = 'ARG BASE=debian:bookworm-slim@sha256:' + 'a'.repeat(64) + '\n# c\nFROM ${BASE} AS build\nRUN apt-get install -y \\\n  # comment\n  g++ \\\n  cmake\nFROM build\n';
  const ins = parseDockerfile(text);
  assert.deepStrictEqual(ins.map((i) => i.keyword), ['ARG', 'FROM', 'RUN', 'FROM']);
  const st = stages(ins).stages;
  assert.strictEqual(st[0].image, 'debian:bookworm-slim@sha256:' + 'a'.repeat(64));
  assert.strictEqual(st[1].image, 'build');
  assert.deepStrictEqual(portcullisPackages('PORTCULLIS_PACKAGES=(\n  a b # c\n  d\n)'), ['a', 'b', 'd']);
});
