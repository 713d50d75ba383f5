'use strict';
// What the manifests must agree with in the C++ sources, read from the repository (no build
// needed): the environment variables each binary reads and their defaults (each setting's
// declaration, PORTCULLIS_SETTING(type, flag, "NAME", "default", ...), wherever under the service it
// lives; and EnvOr("NAME", "default") in its main.cc, the older way) and the Prometheus metric
// names each service registers (string literals "portcullis_…" under its src/). So a ConfigMap key
// nobody reads, or an HPA metric the verifier does not expose, fails here instead of silently
// doing nothing in a cluster.
const fs = require('fs');
const path = require('path');

const SERVICES = { 'ingest-gateway': 'ingest-gateway', 'verifier-service': 'verifier-service' };

function walk(dir, out = []) {
  if (!fs.existsSync(dir)) return out;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (/\.(cc|h)$/.test(e.name)) out.push(p);
  }
  return out;
}

// A setting's declaration (common/config/setting.h): its type, flag, variable and default.
const SETTING = /PORTCULLIS_SETTING\(\s*[\w:<>]+\s*,\s*\w+\s*,\s*"([A-Z0-9_]+)"\s*,\s*"([^"]*)"/g;
const ENV_OR = /EnvOr\(\s*"([A-Z0-9_]+)"\s*,\s*"([^"]*)"\s*\)/g;

// {service: {env: Map(name → default), metrics: Set(name), error?: string}}
function readSourceFacts(root) {
  const facts = {};
  for (const [service, dir] of Object.entries(SERVICES)) {
    const main = path.join(root, dir, 'main.cc');
    const f = { env: new Map(), metrics: new Set() };
    if (!fs.existsSync(main)) f.error = `${dir}/main.cc not found`;
    const sources = walk(path.join(root, dir, 'src'));
    for (const file of f.error ? [] : [main, ...sources]) {
      const text = fs.readFileSync(file, 'utf8');
      for (const pattern of [SETTING, ENV_OR]) {
        for (const m of text.matchAll(pattern)) f.env.set(m[1], m[2]);
      }
    }
    for (const file of sources) {
      for (const m of fs.readFileSync(file, 'utf8').matchAll(/"(portcullis_[a-z0-9_]+)"/g)) f.metrics.add(m[1]);
    }
    if (!f.error && f.env.size === 0) f.error = `no environment variables found in ${dir}/main.cc or under ${dir}/src (PORTCULLIS_SETTING or EnvOr)`;
    if (!f.error && f.metrics.size === 0) f.error = `no portcullis_* metric names under ${dir}/src`;
    facts[service] = f;
  }
  return facts;
}

const ref = (o) => `${o.kind}/${o.metadata?.name}`;

// A plain Kubernetes quantity ("500", "1.5k", "250m") as a number; NaN for anything else.
function quantity(text) {
  const m = /^(\d+(?:\.\d+)?)(m|k)?$/.exec(String(text ?? '').trim());
  if (!m) return NaN;
  return Number(m[1]) * ({ m: 0.001, k: 1000 }[m[2]] ?? 1);
}

// Checks the rendered objects of one overlay against `facts`; returns failure messages.
function checkAgainstSource(objects, facts) {
  const failures = [];
  for (const f of Object.values(facts)) if (f.error) failures.push(f.error);
  if (failures.length) return failures;
  const deployments = objects.filter((o) => o.kind === 'Deployment' && facts[o.metadata?.name]);
  const configMaps = new Map(objects.filter((o) => o.kind === 'ConfigMap').map((c) => [c.metadata.name, c]));

  // Every HPA metric beyond CPU/memory names a metric its target registers.
  for (const h of objects.filter((o) => o.kind === 'HorizontalPodAutoscaler')) {
    const target = h.spec?.scaleTargetRef?.name;
    const f = facts[target];
    if (!f) continue;
    for (const m of h.spec.metrics || []) {
      const metricName = m.pods?.metric?.name ?? m.external?.metric?.name ?? m.object?.metric?.name;
      if (metricName === undefined) continue;
      if (!f.metrics.has(metricName)) {
        failures.push(`${ref(h)}: ${m.type} metric ${metricName} is not registered by ${target} (under ${target}/src: ${[...f.metrics].filter((n) => !/_fetch_/.test(n)).join(', ')})`);
      }
    }
  }

  for (const d of deployments) {
    const service = d.metadata.name;
    const f = facts[service];
    const c = (d.spec.template.spec.containers || []).find((x) => x.name === service);
    if (!c) continue;
    // Every variable handed to the container is one the binary reads.
    const env = {};
    for (const from of c.envFrom || []) {
      const cm = from.configMapRef && configMaps.get(from.configMapRef.name);
      for (const [k, v] of Object.entries(cm?.data || {})) {
        env[k] = v;
        if (!f.env.has(k)) failures.push(`${ref(cm)}: ${k} is not read by ${service} (it reads ${[...f.env.keys()].join(', ')})`);
      }
    }
    for (const e of c.env || []) {
      if (!f.env.has(e.name)) failures.push(`${ref(d)}: env ${e.name} is not read by ${service}`);
      if (e.value !== undefined) env[e.name] = e.value;
    }
    if (service !== 'verifier-service') continue;

    // The verifier's /metrics: served (ADMIN_LISTEN off loopback) on the port the pod declares
    // and the scrape annotation names, whenever an HPA reads a custom metric from it.
    const hpa = objects.find((o) => o.kind === 'HorizontalPodAutoscaler' && o.spec?.scaleTargetRef?.name === service);
    const custom = (hpa?.spec?.metrics || []).some((m) => m.type !== 'Resource');
    const listen = env.ADMIN_LISTEN ?? f.env.get('ADMIN_LISTEN');
    const port = /:(\d+)$/.exec(String(listen || ''))?.[1];
    if (custom) {
      if (!port || /^(127\.|\[::1\]|localhost)/.test(listen)) failures.push(`${service}: its HPA reads custom metrics but ADMIN_LISTEN is ${JSON.stringify(listen)} (must serve /metrics off loopback)`);
      else {
        if (!(c.ports || []).some((p) => String(p.containerPort) === port)) failures.push(`${ref(d)}: ADMIN_LISTEN port ${port} is not a containerPort`);
        const annotated = d.spec.template.metadata?.annotations?.['prometheus.io/port'];
        if (annotated !== undefined && annotated !== port) failures.push(`${ref(d)}: prometheus.io/port ${annotated} is not ADMIN_LISTEN's port ${port}`);
      }
    }
    // The in-flight target must be reachable: below the cap on the verifications each pod keeps
    // in flight. Since the event-driven worker that cap is MAX_VERIFICATIONS_IN_FLIGHT (a
    // verification waiting on its source holds no thread; WORKERS threads only record outcomes),
    // and the ConfigMap sets it, so that the target and the cap it is a share of are read
    // together and a new default in the source cannot move one under the other.
    for (const m of hpa?.spec?.metrics || []) {
      if (m.pods?.metric?.name !== 'portcullis_verifier_verifications_in_flight') continue;
      if (env.MAX_VERIFICATIONS_IN_FLIGHT === undefined) {
        failures.push(`${ref(hpa)} scales on verifications in flight, but the verifier's ConfigMap does not set MAX_VERIFICATIONS_IN_FLIGHT, their cap per pod`);
        continue;
      }
      const cap = quantity(env.MAX_VERIFICATIONS_IN_FLIGHT);
      const target = quantity(m.pods.target?.averageValue);
      if (!(cap > 0)) failures.push(`${service}: MAX_VERIFICATIONS_IN_FLIGHT ${JSON.stringify(env.MAX_VERIFICATIONS_IN_FLIGHT)} is not a positive number`);
      else if (!(target > 0 && target < cap)) failures.push(`${ref(hpa)}: in-flight target ${m.pods.target?.averageValue} must be above 0 and below MAX_VERIFICATIONS_IN_FLIGHT ${cap}`);
    }
    // The fetcher's allow list punches holes in the SSRF policy: tests and demos only.
    if (env.EGRESS_ALLOW_CIDRS) failures.push(`${service}: EGRESS_ALLOW_CIDRS=${env.EGRESS_ALLOW_CIDRS} (tests and demos only, never in a cluster)`);
  }
  return failures;
}

module.exports = { readSourceFacts, checkAgainstSource };
