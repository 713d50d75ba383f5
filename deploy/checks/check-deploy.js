'use strict';
// The offline checks of deploy/: renders every overlay, validates every object against the
// Kubernetes API schemas, runs our assertions, lints the Dockerfiles. One line per check, then
// "N passed, M failed[, K skipped]"; exits 1 on any failure. Run through scripts/check-deploy,
// which installs the pinned npm dependencies into .cache/ first.
//
//   node deploy/checks/check-deploy.js [--root DIR] [--shared DIR] [--renderer auto|kubectl|builtin]
//                                      [--self-test]
const fs = require('fs');
const path = require('path');
const { execFileSync, spawnSync } = require('child_process');
const yaml = require('js-yaml');
const kustomize = require('./lib/kustomize');
const { validateObject } = require('./lib/schema');
const { CHECKS, checkVerifierEgress, workloads } = require('./lib/assertions');
const { parseSsrfPolicy } = require('./lib/ssrf-policy');
const { lintDockerfile, runtimeUid } = require('./lib/dockerfile');
const { readSourceFacts, checkAgainstSource } = require('./lib/source');

function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    const o = {};
    for (const k of Object.keys(v).sort()) o[k] = sortKeys(v[k]);
    return o;
  }
  return v;
}

const canonical = (objects) => objects.map((o) => JSON.stringify(sortKeys(o))).sort();

// kubectl with an embedded kustomize v4+ (older ones lack `resources: [dir]` and inline patches).
function findKubectl() {
  try {
    const out = execFileSync('kubectl', ['version', '--client'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 30000 });
    const m = out.match(/Kustomize Version:\s*v?(\d+)\.(\d+)\.(\d+)/);
    if (m && Number(m[1]) >= 4) return { version: `v${m[1]}.${m[2]}.${m[3]}` };
    return null;
  } catch (e) {
    return null;
  }
}

function kubectlRender(dir) {
  const out = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60000, maxBuffer: 64 << 20 });
  return yaml.loadAll(out).filter(Boolean);
}

function kindCounts(objects) {
  const counts = {};
  for (const o of objects) counts[o.kind] = (counts[o.kind] || 0) + 1;
  return Object.entries(counts).map(([k, n]) => `${k} ${n}`).join(', ');
}

function firstDifference(a, b) {
  const sa = new Set(a);
  const sb = new Set(b);
  const onlyA = a.find((x) => !sb.has(x));
  const onlyB = b.find((x) => !sa.has(x));
  return `only in kubectl: ${(onlyA || '-').slice(0, 300)} | only in built-in: ${(onlyB || '-').slice(0, 300)}`;
}

// Runs every check; returns [{status: 'PASS'|'FAIL'|'SKIP', name, detail}].
function runChecks(options) {
  const root = path.resolve(options.root);
  const shared = path.resolve(options.shared ?? path.join(root, '..', 'shared'));
  const ci = options.ci ?? process.env.CI === 'true';
  const results = [];
  const record = (name, failures, okDetail) => {
    if (failures.length) results.push({ status: 'FAIL', name, detail: failures.join('; ') });
    else results.push({ status: 'PASS', name, detail: okDetail || '' });
  };

  // The SSRF ranges, from the shared policy.
  let ssrf = null;
  const policyFile = path.join(shared, 'SSRF-POLICY.md');
  if (fs.existsSync(policyFile)) {
    try {
      ssrf = parseSsrfPolicy(fs.readFileSync(policyFile, 'utf8'));
    } catch (e) {
      record('ssrf policy', [e.message]);
    }
  } else if (ci) {
    record('ssrf policy', [`${policyFile} is missing and CI=true: the verifier's egress exceptions cannot be checked`]);
  } else {
    results.push({ status: 'SKIP', name: 'ssrf policy', detail: `!!! ${policyFile} is missing: the verifier's egress exceptions are NOT checked against it !!!` });
  }

  // Renderers.
  const mode = options.renderer || 'auto';
  const kubectl = options.kubectlRender ? { version: 'injected' } : mode === 'builtin' ? null : findKubectl();
  if (mode === 'kubectl' && !kubectl) record('renderer', ['--renderer kubectl: no kubectl with kustomize v4+ on PATH']);
  const renderKubectl = options.kubectlRender || kubectlRender;

  // Env variables and metric names from the C++ sources (lib/source.js).
  const sourceFacts = readSourceFacts(root);

  const overlaysDir = path.join(root, 'deploy', 'k8s', 'overlays');
  const overlays = fs.existsSync(overlaysDir) ? fs.readdirSync(overlaysDir).filter((d) => fs.statSync(path.join(overlaysDir, d)).isDirectory()).sort() : [];
  if (overlays.length === 0) record('overlays', [`no overlays under ${overlaysDir}`]);
  const rendered = {};
  for (const overlay of overlays) {
    const dir = path.join(overlaysDir, overlay);
    let objects = null;
    let builtin = null;
    let builtinError = null;
    try {
      builtin = kustomize.render(dir);
    } catch (e) {
      builtinError = e.message;
    }
    if (kubectl) {
      try {
        objects = renderKubectl(dir);
        record(`[${overlay}] render`, [], `kubectl kustomize (kustomize ${kubectl.version}): ${objects.length} objects (${kindCounts(objects)})`);
      } catch (e) {
        record(`[${overlay}] render`, [`kubectl kustomize: ${String(e.stderr || e.message).trim().split('\n')[0]}`]);
      }
      if (objects) {
        if (builtinError) record(`[${overlay}] built-in renderer agrees with kubectl`, [builtinError]);
        else {
          const a = canonical(objects);
          const b = canonical(builtin);
          const same = a.length === b.length && a.every((x, i) => x === b[i]);
          record(`[${overlay}] built-in renderer agrees with kubectl`, same ? [] : [firstDifference(a, b)], `${b.length} identical objects`);
        }
      }
    } else {
      if (builtinError) record(`[${overlay}] render`, [`built-in renderer: ${builtinError}`]);
      else {
        objects = builtin;
        record(`[${overlay}] render`, [], `built-in renderer (no kubectl with kustomize v4+): ${objects.length} objects (${kindCounts(objects)})`);
      }
      if (mode !== 'builtin') results.push({ status: 'SKIP', name: `[${overlay}] built-in renderer agrees with kubectl`, detail: 'no kubectl with kustomize v4+ on PATH' });
    }
    if (!objects) continue;
    rendered[overlay] = objects;

    const schemaFailures = [];
    for (const o of objects) for (const f of validateObject(o)) schemaFailures.push(`${o.kind}/${o.metadata?.name}: ${f}`);
    record(`[${overlay}] schema`, schemaFailures, `${objects.length} objects valid (kubernetes-models)`);

    for (const [name, check] of Object.entries(CHECKS)) {
      let failures;
      try {
        failures = check(objects, overlay);
      } catch (e) {
        failures = [`check crashed: ${e.stack.split('\n').slice(0, 2).join(' ')}`];
      }
      let okDetail = '';
      if (name === 'images' && objects.some((o) => JSON.stringify(o).includes(`@sha256:${'0'.repeat(64)}`))) {
        okDetail = 'note: placeholder digests (sha256:000…): set the real ones before applying';
      }
      record(`[${overlay}] ${name}`, failures, okDetail);
    }
    record(`[${overlay}] sourceAgreement`, checkAgainstSource(objects, sourceFacts),
      'ConfigMap keys are env variables the binaries read; HPA metrics are ones the verifier registers');
    const egress = checkVerifierEgress(objects, ssrf ? ssrf.ranges : []);
    record(`[${overlay}] verifierEgress`, egress, ssrf ? `every one of ${ssrf.ranges.length} SSRF-POLICY.md ranges excepted on 80/443` : 'DNS, PostgreSQL, public 80/443 (SSRF ranges not checked: policy missing)');
  }

  // Dockerfiles.
  const dockerDir = path.join(root, 'deploy', 'docker');
  const commonShFile = path.join(root, 'scripts', 'lib', 'common.sh');
  const commonSh = fs.existsSync(commonShFile) ? fs.readFileSync(commonShFile, 'utf8') : null;
  if (!commonSh) record('dockerfile packages', [`${commonShFile} missing`]);
  const dockerfiles = fs.existsSync(dockerDir) ? fs.readdirSync(dockerDir).filter((f) => f.endsWith('.Dockerfile')).sort() : [];
  const services = dockerfiles.map((f) => f.replace(/\.Dockerfile$/, ''));
  for (const want of ['ingest-gateway', 'verifier-service']) {
    if (!services.includes(want)) record(`dockerfile ${want}`, [`deploy/docker/${want}.Dockerfile missing`]);
  }
  const bases = new Set();
  for (const file of dockerfiles) {
    const service = file.replace(/\.Dockerfile$/, '');
    const text = fs.readFileSync(path.join(dockerDir, file), 'utf8');
    const lint = lintDockerfile(text, { service, commonSh });
    for (const [rule, failures] of Object.entries(lint)) record(`dockerfile ${service}: ${rule}`, failures);
    const m = text.match(/@sha256:[0-9a-f]{64}/);
    if (m) bases.add(m[0]);
    const uid = runtimeUid(text);
    const uidFailures = [];
    for (const [overlay, objects] of Object.entries(rendered)) {
      for (const { obj, spec } of workloads(objects)) {
        for (const c of spec.containers || []) {
          const image = kustomize.splitImage(String(c.image)).name;
          if (!image.endsWith(`/${service}`) && image !== service) continue;
          const runAs = c.securityContext?.runAsUser ?? spec.securityContext?.runAsUser;
          if (runAs !== undefined && runAs !== uid) uidFailures.push(`[${overlay}] ${obj.kind}/${obj.metadata.name} runs as ${runAs}, the image's USER is ${uid}`);
        }
      }
    }
    record(`dockerfile ${service}: manifests run as the image's USER ${uid}`, uidFailures);
  }
  if (bases.size > 1) record('dockerfiles share one pinned base', [`${bases.size} different digests`]);
  const ignoreFile = path.join(root, '.dockerignore');
  const ignore = fs.existsSync(ignoreFile) ? fs.readFileSync(ignoreFile, 'utf8').split('\n').map((l) => l.trim()) : null;
  if (!ignore) record('.dockerignore', ['missing']);
  else {
    const needed = ['.git', 'build', 'run', '.cache'];
    const missing = needed.filter((n) => !ignore.includes(n) && !ignore.includes(`${n}/`) && !ignore.includes(`/${n}`));
    if (!ignore.some((l) => /node_modules/.test(l))) missing.push('node_modules');
    record('.dockerignore', missing.length ? [`does not exclude ${missing.join(', ')}`] : []);
  }
  return { results, rendered };
}

function selfTest() {
  const dir = path.join(__dirname, 'test');
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.test.js')).sort().map((f) => path.join(dir, f));
  const run = spawnSync(process.execPath, ['--test', ...files], { encoding: 'utf8', env: process.env, maxBuffer: 64 << 20 });
  const out = `${run.stdout}\n${run.stderr}`;
  const pass = out.match(/^# pass (\d+)/m);
  const fail = out.match(/^# fail (\d+)/m);
  return { ok: run.status === 0, pass: pass ? Number(pass[1]) : 0, fail: fail ? Number(fail[1]) : 0, output: out };
}

function main(argv) {
  const options = { root: path.join(__dirname, '..', '..') };
  let withSelfTest = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--root') options.root = argv[++i];
    else if (a === '--shared') options.shared = argv[++i];
    else if (a === '--renderer') options.renderer = argv[++i];
    else if (a === '--self-test') withSelfTest = true;
    else {
      console.error(`unknown argument ${a}`);
      return 2;
    }
  }
  const { results } = runChecks(options);
  if (withSelfTest) {
    const t = selfTest();
    if (!t.ok) {
      const lines = t.output.split('\n');
      const shown = lines.filter((l, i) => /^\s*not ok/.test(l) || (/^\s+(error|expected|actual):/.test(l) && lines.slice(Math.max(0, i - 6), i).some((x) => /not ok/.test(x))));
      console.log(shown.slice(0, 60).join('\n'));
    }
    results.push({ status: t.ok ? 'PASS' : 'FAIL', name: 'self-test (node --test deploy/checks/test)', detail: `${t.pass} tests passed, ${t.fail} failed` });
  }
  for (const r of results) console.log(`${r.status} ${r.name}${r.detail ? `: ${r.detail}` : ''}`);
  const n = (s) => results.filter((r) => r.status === s).length;
  const skipped = n('SKIP');
  console.log(`${n('PASS')} passed, ${n('FAIL')} failed${skipped ? `, ${skipped} skipped` : ''}`);
  return n('FAIL') ? 1 : 0;
}

module.exports = { runChecks };

if (require.main === module) process.exit(main(process.argv.slice(2)));
