'use strict';
// Builds a throwaway copy of what the checks read (deploy/k8s, deploy/docker, .dockerignore,
// scripts/lib/common.sh, the SSRF policy) in a temp dir, lets a test break it, and runs the checks.
const fs = require('fs');
const os = require('os');
const path = require('path');
const yaml = require('js-yaml');
const { runChecks } = require('../check-deploy');

const REPO = path.resolve(__dirname, '..', '..', '..');
const SHARED = path.resolve(REPO, '..', 'shared');

// A minimal policy with the same structure as ../shared/SSRF-POLICY.md, for machines without it.
const FALLBACK_POLICY = `# policy
## IPv4 blocks refused

| block | why |
|---|---|
| 0.0.0.0/8 | this network |
| 10.0.0.0/8 | private |
| 100.64.0.0/10 | cgnat |
| 127.0.0.0/8 | loopback |
| 169.254.0.0/16 | link local |
| 172.16.0.0/12 | private |
| 192.168.0.0/16 | private |
| 224.0.0.0/4 | multicast |
| 240.0.0.0/4 | reserved |

## IPv6 blocks refused

Outside 2000::/3 everything is refused — that covers \`::1\`, \`fc00::/7\`, \`fe80::/10\`. Inside 2000::/3
also refuse: \`2001::/23\`, \`2001:db8::/32\`, \`3fff::/20\`, \`2002::/16\`.

## Next
`;

function makeFixture() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'portcullis-deploy-'));
  fs.cpSync(path.join(REPO, 'deploy', 'k8s'), path.join(root, 'deploy', 'k8s'), { recursive: true });
  fs.cpSync(path.join(REPO, 'deploy', 'docker'), path.join(root, 'deploy', 'docker'), { recursive: true });
  fs.mkdirSync(path.join(root, 'scripts', 'lib'), { recursive: true });
  fs.copyFileSync(path.join(REPO, 'scripts', 'lib', 'common.sh'), path.join(root, 'scripts', 'lib', 'common.sh'));
  fs.copyFileSync(path.join(REPO, '.dockerignore'), path.join(root, '.dockerignore'));
  // What lib/source.js reads: each service's main.cc and the .cc/.h files under its src/ (where
  // the settings are declared).
  for (const service of ['ingest-gateway', 'verifier-service']) {
    fs.mkdirSync(path.join(root, service), { recursive: true });
    fs.copyFileSync(path.join(REPO, service, 'main.cc'), path.join(root, service, 'main.cc'));
    fs.cpSync(path.join(REPO, service, 'src'), path.join(root, service, 'src'), {
      recursive: true,
      filter: (src) => fs.statSync(src).isDirectory() || /\.(cc|h)$/.test(src),
    });
  }
  const shared = path.join(root, 'shared');
  fs.mkdirSync(shared);
  const policy = path.join(SHARED, 'SSRF-POLICY.md');
  fs.writeFileSync(path.join(shared, 'SSRF-POLICY.md'), fs.existsSync(policy) ? fs.readFileSync(policy, 'utf8') : FALLBACK_POLICY);
  return {
    root,
    shared,
    file: (rel) => path.join(root, rel),
    read: (rel) => fs.readFileSync(path.join(root, rel), 'utf8'),
    write: (rel, text) => fs.writeFileSync(path.join(root, rel), text),
    // Edits the YAML documents of a file: fn(docs) mutates them in place.
    editYaml(rel, fn) {
      const docs = yaml.loadAll(this.read(rel)).filter(Boolean);
      fn(docs);
      this.write(rel, docs.map((d) => yaml.dump(d)).join('---\n'));
    },
    replace(rel, from, to) {
      const text = this.read(rel);
      if (!text.includes(from)) throw new Error(`${rel} does not contain ${from}`);
      this.write(rel, text.split(from).join(to));
    },
    run(options = {}) {
      const { results } = runChecks({ root, shared, renderer: 'builtin', ci: false, ...options });
      return results;
    },
    cleanup() {
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

// The result of the check named `name` (exact), or throws listing the names.
function result(results, name) {
  const r = results.find((x) => x.name === name);
  if (!r) throw new Error(`no check named ${name}; have: ${results.map((x) => x.name).join(' | ')}`);
  return r;
}

module.exports = { makeFixture, result, REPO };
