'use strict';
// A Dockerfile reader (continuations, comments, ARG defaults, stages) and our lint rules:
// pinned base, non-root USER in the final stage, no secrets, exec-form ENTRYPOINT, and build
// packages that match scripts/lib/common.sh.

// Packages of PORTCULLIS_PACKAGES that building the binaries does not need (tests, local runs).
const NOT_FOR_BUILD = new Set(['git', 'ca-certificates', 'curl', 'procps', 'postgresql-15', 'nodejs', 'chromium']);
const SECRET_NAME = /(PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|PRIVATE_?KEY|ACCESS_?KEY|CREDENTIAL|DATABASE_URL)/i;
const SECRET_FILE = /(^|\/)(\.env(\..*)?|id_rsa|id_ed25519|.*\.pem|.*\.key|\.npmrc|\.netrc|\.pgpass|credentials(\.json)?)$/i;

function parseDockerfile(text) {
  const instructions = [];
  let current = '';
  let startLine = 0;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (current === '' && /^\s*#/.test(line)) continue;
    if (current !== '' && /^\s*#/.test(line)) continue; // comments inside continuations
    if (current === '') startLine = i + 1;
    if (/\\\s*$/.test(line)) {
      current += line.replace(/\\\s*$/, ' ');
      continue;
    }
    current += line;
    if (current.trim() !== '') {
      const m = current.trim().match(/^(\S+)\s*(.*)$/s);
      instructions.push({ line: startLine, keyword: m[1].toUpperCase(), args: m[2].trim() });
    }
    current = '';
  }
  return instructions;
}

function substitute(text, vars) {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (all, a, def, b) => {
    const n = a || b;
    if (vars[n] !== undefined && vars[n] !== '') return vars[n];
    return def !== undefined ? def : all;
  });
}

// Splits into stages: [{from, image, alias, instructions}], with global ARG defaults applied.
function stages(instructions) {
  const globalArgs = {};
  const out = [];
  for (const ins of instructions) {
    if (ins.keyword === 'ARG' && out.length === 0) {
      const m = ins.args.match(/^([A-Za-z_][A-Za-z0-9_]*)(?:=(.*))?$/);
      if (m) globalArgs[m[1]] = (m[2] || '').replace(/^"(.*)"$/, '$1');
      continue;
    }
    if (ins.keyword === 'FROM') {
      const parts = ins.args.split(/\s+/).filter((p) => !p.startsWith('--'));
      const image = substitute(parts[0], globalArgs);
      const alias = parts[1]?.toUpperCase() === 'AS' ? parts[2] : undefined;
      out.push({ line: ins.line, image, alias, instructions: [] });
      continue;
    }
    if (out.length) out[out.length - 1].instructions.push(ins);
  }
  return { stages: out, globalArgs };
}

// The packages of every `apt-get install` in a stage.
function aptPackages(stage) {
  const pkgs = [];
  for (const ins of stage.instructions) {
    if (ins.keyword !== 'RUN') continue;
    for (const cmd of ins.args.split(/&&|;|\|\|/)) {
      const m = cmd.match(/apt-get\s+install\s+(.*)$/s);
      if (!m) continue;
      for (const tok of m[1].trim().split(/\s+/)) if (tok && !tok.startsWith('-')) pkgs.push(tok);
    }
  }
  return pkgs;
}

// PORTCULLIS_PACKAGES=( ... ) of scripts/lib/common.sh.
function portcullisPackages(commonSh) {
  const m = commonSh.match(/PORTCULLIS_PACKAGES=\(([\s\S]*?)\)/);
  if (!m) throw new Error('PORTCULLIS_PACKAGES not found in scripts/lib/common.sh');
  return m[1].split('\n').map((l) => l.replace(/#.*/, '')).join(' ').split(/\s+/).filter(Boolean);
}

// Returns {rule: [failures]} for one Dockerfile. `service` is the binary it must run.
function lintDockerfile(text, { service, commonSh }) {
  const result = { pinnedBase: [], nonRootUser: [], noSecrets: [], entrypoint: [], buildPackages: [] };
  const instructions = parseDockerfile(text);
  const { stages: st, globalArgs } = stages(instructions);
  if (st.length < 2) result.pinnedBase.push(`multi-stage build expected, found ${st.length} stage(s)`);
  const aliases = new Set(st.map((s) => s.alias).filter(Boolean));
  for (const s of st) {
    if (aliases.has(s.image)) continue;
    if (s.image === 'scratch') continue;
    if (!/@sha256:[0-9a-f]{64}$/.test(s.image)) result.pinnedBase.push(`line ${s.line}: FROM ${s.image} is not pinned by @sha256 digest`);
    if (!/^(docker\.io\/(library\/)?)?debian:bookworm-slim@/.test(s.image)) result.pinnedBase.push(`line ${s.line}: FROM ${s.image} is not debian:bookworm-slim`);
  }
  const final = st[st.length - 1];
  if (final) {
    const users = final.instructions.filter((i) => i.keyword === 'USER');
    const last = users[users.length - 1];
    if (!last) result.nonRootUser.push('the final stage has no USER (runs as root)');
    else {
      const [uid, gid] = last.args.split(':');
      if (!/^[0-9]+$/.test(uid)) result.nonRootUser.push(`USER ${last.args}: must be a numeric UID (runAsNonRoot cannot verify a name)`);
      else if (Number(uid) === 0) result.nonRootUser.push('USER 0 is root');
      if (gid !== undefined && (!/^[0-9]+$/.test(gid) || Number(gid) === 0)) result.nonRootUser.push(`USER ${last.args}: group must be a numeric non-zero GID`);
      const after = final.instructions.slice(final.instructions.indexOf(last) + 1);
      if (after.some((i) => i.keyword === 'RUN')) result.nonRootUser.push('RUN after the final USER');
    }
    const eps = final.instructions.filter((i) => i.keyword === 'ENTRYPOINT');
    const ep = eps[eps.length - 1];
    if (!ep) result.entrypoint.push('no ENTRYPOINT');
    else {
      let argv;
      try {
        argv = JSON.parse(ep.args);
      } catch (e) {
        argv = null;
      }
      if (!Array.isArray(argv)) result.entrypoint.push(`ENTRYPOINT ${ep.args}: must be exec form (no shell at runtime)`);
      else if (argv[0] !== `/usr/local/bin/${service}`) result.entrypoint.push(`ENTRYPOINT runs ${argv[0]}, expected /usr/local/bin/${service}`);
      else if (['sh', 'bash', '/bin/sh', '/bin/bash'].includes(argv[0])) result.entrypoint.push('ENTRYPOINT starts a shell');
    }
    if (final.instructions.some((i) => i.keyword === 'CMD' && !i.args.startsWith('['))) result.entrypoint.push('CMD in shell form');
  }
  for (const ins of instructions) {
    if (ins.keyword === 'ENV' || ins.keyword === 'ARG') {
      const pairs = ins.args.match(/([A-Za-z_][A-Za-z0-9_]*)(?:=|\s+)("[^"]*"|\S*)/g) || [];
      for (const p of pairs) {
        const n = p.split(/[=\s]/)[0];
        const v = p.slice(n.length + 1).trim();
        if (SECRET_NAME.test(n) && v !== '') result.noSecrets.push(`line ${ins.line}: ${ins.keyword} ${n} carries a value`);
      }
    }
    if (/[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:[^/\s@]+@/i.test(ins.args)) result.noSecrets.push(`line ${ins.line}: credentials in a URL`);
    if (ins.keyword === 'COPY' || ins.keyword === 'ADD') {
      for (const src of ins.args.split(/\s+/).filter((t) => !t.startsWith('--')).slice(0, -1)) {
        if (SECRET_FILE.test(src)) result.noSecrets.push(`line ${ins.line}: ${ins.keyword} ${src} looks like a secret file`);
      }
    }
    if (ins.keyword === 'RUN' && /--mount=type=secret/.test(ins.args) === false && /(BEGIN [A-Z ]*PRIVATE KEY|AKIA[0-9A-Z]{16})/.test(ins.args)) {
      result.noSecrets.push(`line ${ins.line}: key material in RUN`);
    }
  }
  if (commonSh) {
    const want = portcullisPackages(commonSh).filter((p) => !NOT_FOR_BUILD.has(p));
    const buildStage = st.find((s) => s.alias === 'build') || st[0];
    const have = aptPackages(buildStage);
    const missing = want.filter((p) => !have.includes(p));
    const extra = have.filter((p) => !want.includes(p));
    if (missing.length) result.buildPackages.push(`build stage lacks ${missing.join(' ')} (in PORTCULLIS_PACKAGES)`);
    if (extra.length) result.buildPackages.push(`build stage installs ${extra.join(' ')} (not in PORTCULLIS_PACKAGES)`);
    if (!buildStage.instructions.some((i) => i.keyword === 'RUN' && /cmake\s+--preset\s+release/.test(i.args))) result.buildPackages.push('build stage does not configure the release preset');
  }
  return result;
}

// The runtime UID of a Dockerfile (for the manifests' runAsUser), or null.
function runtimeUid(text) {
  const { stages: st } = stages(parseDockerfile(text));
  const users = (st[st.length - 1]?.instructions || []).filter((i) => i.keyword === 'USER');
  const u = users[users.length - 1]?.args.split(':')[0];
  return u && /^[0-9]+$/.test(u) ? Number(u) : null;
}

module.exports = { parseDockerfile, stages, lintDockerfile, portcullisPackages, runtimeUid, aptPackages };
