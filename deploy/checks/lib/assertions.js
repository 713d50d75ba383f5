'use strict';
// Our own rules for the rendered manifests (../../../STYLE.md "Manifests", issue 7). Each
// function takes the rendered objects of one overlay and returns a list of failure messages;
// an empty list passes. They know the two workloads by name: ingest-gateway, verifier-service.
const { parseCidr, firstAllowedPart, formatAddress } = require('./cidr');
const { podSpecs } = require('./kustomize');

const GATEWAY = 'ingest-gateway';
const VERIFIER = 'verifier-service';
const HEADLESS = 'verifier-service-headless';
const VERIFIER_ADDRESS = `dns:///${HEADLESS}:50051`;
const CLIENT_LABEL = ['portcullis.dev/verifier-client', 'true'];
// Namespaces whose pods may scrape the admin port (/metrics) of both services.
const SCRAPER_LABEL = ['portcullis.dev/metrics-scraper', 'true'];
const ADMIN_PORT = 9090;
// Binary defaults (the settings of ingest-gateway/src/gateway_config.cc and
// verifier-service/src/verifier_flags.cc) when a variable is unset.
const DEFAULTS = { SHUTDOWN_DELAY: '0s', DRAIN_TIMEOUT: '10s' };

const name = (o) => o?.metadata?.name;
const ref = (o) => `${o.kind}/${name(o)}`;
const ofKind = (objects, kind) => objects.filter((o) => o.kind === kind);
const byName = (objects, kind, n) => objects.find((o) => o.kind === kind && name(o) === n);

// Workloads with a pod template: [{obj, spec, labels}].
function workloads(objects) {
  const out = [];
  for (const o of objects) {
    if (o.kind === 'Pod') continue;
    for (const spec of podSpecs(o)) {
      const labels = o.spec?.template?.metadata?.labels || o.spec?.jobTemplate?.spec?.template?.metadata?.labels || {};
      out.push({ obj: o, spec, labels });
    }
  }
  return out;
}

function containers(spec) {
  return [...(spec.initContainers || []), ...(spec.containers || [])];
}

// Does a label selector ({matchLabels, matchExpressions} or a plain map for Services) select
// `labels`? matchExpressions are evaluated too.
function selectorMatches(selector, labels, plainMap = false) {
  if (!selector) return false;
  const matchLabels = plainMap ? selector : selector.matchLabels || {};
  for (const [k, v] of Object.entries(matchLabels)) if (labels[k] !== v) return false;
  for (const e of plainMap ? [] : selector.matchExpressions || []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    const vals = e.values || [];
    if (e.operator === 'In' && !(has && vals.includes(labels[e.key]))) return false;
    if (e.operator === 'NotIn' && has && vals.includes(labels[e.key])) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

const sameMap = (a, b) => JSON.stringify(Object.entries(a || {}).sort()) === JSON.stringify(Object.entries(b || {}).sort());

// The environment a container sees from its env and envFrom ConfigMaps (Secrets are not read).
function containerEnv(objects, container) {
  const env = {};
  for (const from of container.envFrom || []) {
    const cm = from.configMapRef && byName(objects, 'ConfigMap', from.configMapRef.name);
    if (cm) Object.assign(env, cm.data || {});
  }
  for (const e of container.env || []) {
    if (e.value !== undefined) env[e.name] = e.value;
    else if (e.valueFrom?.configMapKeyRef) {
      const cm = byName(objects, 'ConfigMap', e.valueFrom.configMapKeyRef.name);
      if (cm?.data?.[e.valueFrom.configMapKeyRef.key] !== undefined) env[e.name] = cm.data[e.valueFrom.configMapKeyRef.key];
    } else env[e.name] = { from: e.valueFrom };
  }
  return env;
}

// absl::ParseDuration subset: "1h2m3.5s", "250ms", "0"; returns seconds or NaN.
function parseDuration(text) {
  if (text === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(ns|us|ms|s|m|h)/gy;
  const unit = { ns: 1e-9, us: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
  let total = 0;
  let m;
  let consumed = 0;
  while ((m = re.exec(text)) !== null) {
    total += Number(m[1]) * unit[m[2]];
    consumed = re.lastIndex;
  }
  return consumed === text.length && consumed > 0 ? total : NaN;
}

function deployment(objects, n) {
  return byName(objects, 'Deployment', n);
}

function mainContainer(objects, n) {
  const d = deployment(objects, n);
  return d?.spec?.template?.spec?.containers?.find((c) => c.name === n);
}

// ---- the checks ---------------------------------------------------------------------------

function checkResources(objects) {
  const failures = [];
  for (const { obj, spec } of workloads(objects)) {
    for (const c of containers(spec)) {
      for (const kind of ['requests', 'limits']) {
        for (const r of ['cpu', 'memory']) {
          if (c.resources?.[kind]?.[r] === undefined) failures.push(`${ref(obj)} container ${c.name}: no resources.${kind}.${r}`);
        }
      }
    }
  }
  return failures;
}

function checkProbes(objects) {
  const failures = [];
  for (const d of ofKind(objects, 'Deployment')) {
    for (const c of containers(d.spec.template.spec)) {
      for (const p of ['readinessProbe', 'livenessProbe']) {
        if (!c[p]) failures.push(`${ref(d)} container ${c.name}: no ${p}`);
      }
    }
  }
  const v = mainContainer(objects, VERIFIER);
  if (!v) failures.push(`Deployment/${VERIFIER}: no container ${VERIFIER}`);
  else {
    // With TLS on the gRPC port (TLS_CERT_FILE), the kubelet's grpc probes (plaintext only) must
    // use the plaintext health-only port HEALTH_LISTEN instead.
    const env = containerEnv(objects, v);
    const tls = typeof env.TLS_CERT_FILE === 'string' && env.TLS_CERT_FILE !== '';
    const healthPort = Number(String(env.HEALTH_LISTEN || '').split(':').pop());
    const port = tls ? healthPort : 50051;
    const where = tls ? `the HEALTH_LISTEN port (TLS is on; HEALTH_LISTEN=${JSON.stringify(env.HEALTH_LISTEN ?? '')})` : 'port 50051';
    for (const p of ['readinessProbe', 'livenessProbe']) {
      if (!(port > 0) || v[p]?.grpc?.port !== port) failures.push(`${VERIFIER} ${p}: must be grpc on ${where} (grpc.health.v1)`);
    }
  }
  const g = mainContainer(objects, GATEWAY);
  if (!g) failures.push(`Deployment/${GATEWAY}: no container ${GATEWAY}`);
  else {
    if (g.readinessProbe?.httpGet?.path !== '/readyz') failures.push(`${GATEWAY} readinessProbe: must be httpGet /readyz`);
    if (g.livenessProbe?.httpGet?.path !== '/healthz') failures.push(`${GATEWAY} livenessProbe: must be httpGet /healthz`);
  }
  return failures;
}

function checkSecurityContext(objects) {
  const failures = [];
  const serviceAccounts = new Map(ofKind(objects, 'ServiceAccount').map((s) => [name(s), s]));
  for (const { obj, spec } of workloads(objects)) {
    const pod = spec.securityContext || {};
    if (spec.automountServiceAccountToken !== false) failures.push(`${ref(obj)}: automountServiceAccountToken must be false`);
    if (spec.hostNetwork || spec.hostPID || spec.hostIPC) failures.push(`${ref(obj)}: host namespaces must not be used`);
    if (!spec.serviceAccountName || !serviceAccounts.has(spec.serviceAccountName)) {
      failures.push(`${ref(obj)}: serviceAccountName ${spec.serviceAccountName ?? '(unset)'} is not a ServiceAccount of this overlay`);
    }
    if (pod.runAsUser === 0) failures.push(`${ref(obj)}: pod runAsUser 0`);
    for (const c of containers(spec)) {
      const sc = c.securityContext || {};
      const where = `${ref(obj)} container ${c.name}`;
      if ((sc.runAsNonRoot ?? pod.runAsNonRoot) !== true) failures.push(`${where}: runAsNonRoot must be true`);
      if ((sc.runAsUser ?? pod.runAsUser) === 0) failures.push(`${where}: runAsUser 0`);
      if (sc.readOnlyRootFilesystem !== true) failures.push(`${where}: readOnlyRootFilesystem must be true`);
      if (sc.allowPrivilegeEscalation !== false) failures.push(`${where}: allowPrivilegeEscalation must be false`);
      if (sc.privileged === true) failures.push(`${where}: privileged`);
      if (!(sc.capabilities?.drop || []).includes('ALL')) failures.push(`${where}: capabilities.drop must include ALL`);
      if ((sc.capabilities?.add || []).length) failures.push(`${where}: capabilities.add must be empty`);
      if ((sc.seccompProfile ?? pod.seccompProfile)?.type !== 'RuntimeDefault') failures.push(`${where}: seccompProfile must be RuntimeDefault`);
    }
  }
  for (const sa of serviceAccounts.values()) {
    if (sa.automountServiceAccountToken !== false) failures.push(`${ref(sa)}: automountServiceAccountToken must be false`);
  }
  return failures;
}

function checkGracePeriod(objects) {
  const failures = [];
  for (const d of ofKind(objects, 'Deployment')) {
    const spec = d.spec.template.spec;
    const grace = spec.terminationGracePeriodSeconds ?? 30;
    for (const c of spec.containers) {
      const env = { ...DEFAULTS, ...containerEnv(objects, c) };
      const delay = parseDuration(String(env.SHUTDOWN_DELAY));
      const drain = parseDuration(String(env.DRAIN_TIMEOUT));
      if (Number.isNaN(delay) || Number.isNaN(drain)) {
        failures.push(`${ref(d)} container ${c.name}: cannot read SHUTDOWN_DELAY=${env.SHUTDOWN_DELAY} DRAIN_TIMEOUT=${env.DRAIN_TIMEOUT}`);
      } else if (!(grace > delay + drain)) {
        failures.push(`${ref(d)}: terminationGracePeriodSeconds ${grace} must exceed SHUTDOWN_DELAY ${delay}s + DRAIN_TIMEOUT ${drain}s`);
      }
    }
  }
  return failures;
}

function checkPodSecurity(objects) {
  const namespaces = ofKind(objects, 'Namespace');
  if (namespaces.length === 0) return ['the overlay renders no Namespace to label for Pod Security admission'];
  return namespaces
    .filter((n) => n.metadata?.labels?.['pod-security.kubernetes.io/enforce'] !== 'restricted')
    .map((n) => `${ref(n)}: label pod-security.kubernetes.io/enforce must be restricted`);
}

function checkSelectors(objects) {
  const failures = [];
  const deployments = ofKind(objects, 'Deployment');
  const pods = workloads(objects);
  for (const d of deployments) {
    if (!selectorMatches(d.spec.selector, d.spec.template.metadata?.labels || {})) failures.push(`${ref(d)}: selector does not match its own pod labels`);
    for (const t of d.spec.template.spec.topologySpreadConstraints || []) {
      if (!sameMap(t.labelSelector?.matchLabels, d.spec.selector.matchLabels)) failures.push(`${ref(d)}: topologySpreadConstraints selector differs from the Deployment's`);
    }
  }
  // Exactly one Deployment, and no other workload's pods, with the very labels of its selector.
  const oneDeployment = (what, selector, plainMap) => {
    const hits = pods.filter((p) => selectorMatches(selector, p.labels, plainMap));
    const deps = hits.filter((p) => p.obj.kind === 'Deployment');
    if (hits.length !== 1 || deps.length !== 1) {
      failures.push(`${what}: selects ${hits.map((p) => ref(p.obj)).join(', ') || 'nothing'} (must be exactly one Deployment)`);
      return;
    }
    const labels = plainMap ? selector : selector.matchLabels;
    if (!sameMap(labels, deps[0].obj.spec.selector.matchLabels)) failures.push(`${what}: selector differs from ${ref(deps[0].obj)}'s selector`);
  };
  for (const s of ofKind(objects, 'Service')) oneDeployment(ref(s), s.spec?.selector || {}, true);
  for (const p of ofKind(objects, 'PodDisruptionBudget')) oneDeployment(ref(p), p.spec?.selector || {}, false);
  for (const h of ofKind(objects, 'HorizontalPodAutoscaler')) {
    const t = h.spec?.scaleTargetRef || {};
    if (t.kind !== 'Deployment' || t.apiVersion !== 'apps/v1' || !deployment(objects, t.name)) failures.push(`${ref(h)}: scaleTargetRef ${t.apiVersion}/${t.kind}/${t.name} is not a Deployment of this overlay`);
  }
  for (const np of ofKind(objects, 'NetworkPolicy')) {
    const sel = np.spec?.podSelector || {};
    if (Object.keys(sel.matchLabels || {}).length === 0 && (sel.matchExpressions || []).length === 0) continue;
    const hits = pods.filter((p) => selectorMatches(sel, p.labels));
    const forClients = sameMap(sel.matchLabels, { [CLIENT_LABEL[0]]: CLIENT_LABEL[1] });
    if (hits.length === 0 && !forClients) failures.push(`${ref(np)}: podSelector selects no pods`);
    if (forClients && hits.length) failures.push(`${ref(np)}: our own workloads carry the internal-client label`);
    for (const p of hits) {
      const own = p.obj.spec.selector?.matchLabels || p.labels;
      if (p.obj.kind === 'Deployment' && !sameMap(sel.matchLabels, own)) failures.push(`${ref(np)}: podSelector differs from ${ref(p.obj)}'s selector`);
    }
  }
  return failures;
}

function checkScaling(objects, overlay) {
  const failures = [];
  const hpas = ofKind(objects, 'HorizontalPodAutoscaler');
  const pdbs = ofKind(objects, 'PodDisruptionBudget');
  for (const h of hpas) if (h.apiVersion !== 'autoscaling/v2') failures.push(`${ref(h)}: must be autoscaling/v2`);
  for (const p of pdbs) if (p.apiVersion !== 'policy/v1') failures.push(`${ref(p)}: must be policy/v1`);
  for (const d of ofKind(objects, 'Deployment')) {
    const mine = hpas.filter((h) => h.spec?.scaleTargetRef?.name === name(d));
    if (mine.length !== 1) {
      failures.push(`${ref(d)}: ${mine.length} HorizontalPodAutoscalers (must be 1)`);
      continue;
    }
    const h = mine[0].spec;
    const metrics = h.metrics || [];
    if (!metrics.some((m) => m.type === 'Resource' && m.resource?.name === 'cpu' && m.resource?.target?.type === 'Utilization')) failures.push(`${ref(mine[0])}: no CPU utilization metric`);
    if (name(d) === VERIFIER && !metrics.some((m) => m.type === 'Pods' && m.pods?.metric?.name)) failures.push(`${ref(mine[0])}: no Pods metric (queue depth)`);
    const min = h.minReplicas ?? 1;
    if (!(min >= 1 && h.maxReplicas >= min)) failures.push(`${ref(mine[0])}: replica range ${min}..${h.maxReplicas}`);
    const pdb = pdbs.find((p) => selectorMatches(p.spec?.selector, d.spec.template.metadata?.labels || {}));
    if (!pdb) failures.push(`${ref(d)}: no PodDisruptionBudget`);
    else if (typeof pdb.spec.minAvailable === 'number' && pdb.spec.minAvailable >= min) {
      failures.push(`${ref(pdb)}: minAvailable ${pdb.spec.minAvailable} >= HPA minReplicas ${min}: no pod could ever be evicted`);
    }
    if (overlay === 'prod' && min < 2) failures.push(`${ref(mine[0])}: prod minReplicas ${min} < 2`);
    if (overlay === 'prod' && d.spec.replicas !== undefined) failures.push(`${ref(d)}: prod sets replicas (the HPA owns them)`);
  }
  return failures;
}

function isDnsPeer(peer) {
  return peer.podSelector?.matchLabels?.['k8s-app'] === 'kube-dns' && peer.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'] === 'kube-system';
}

function portsOf(rule) {
  return (rule.ports || []).map((p) => ({ protocol: p.protocol || 'TCP', port: p.port, endPort: p.endPort }));
}

const onlyDnsPorts = (ports) => ports.length > 0 && ports.every((p) => p.port === 53 && !p.endPort && (p.protocol === 'UDP' || p.protocol === 'TCP'));

function policiesFor(objects, labels) {
  return ofKind(objects, 'NetworkPolicy').filter((np) => selectorMatches(np.spec?.podSelector || {}, labels));
}

function checkDefaultDeny(objects) {
  const failures = [];
  const deny = ofKind(objects, 'NetworkPolicy').find((np) => {
    const sel = np.spec?.podSelector || {};
    const types = np.spec?.policyTypes || [];
    return Object.keys(sel.matchLabels || {}).length === 0 && (sel.matchExpressions || []).length === 0 &&
      types.includes('Ingress') && types.includes('Egress') && !(np.spec.ingress || []).length && !(np.spec.egress || []).length;
  });
  if (!deny) failures.push('no default-deny NetworkPolicy (podSelector {}, policyTypes Ingress+Egress, no rules)');
  for (const { obj, labels } of workloads(objects)) {
    const own = policiesFor(objects, labels).filter((np) => np !== deny);
    if (own.length === 0) failures.push(`${ref(obj)}: no NetworkPolicy of its own`);
  }
  return failures;
}

function podLabels(objects, n) {
  return deployment(objects, n)?.spec?.template?.metadata?.labels || null;
}

// Egress rules of `np` may reach only the verifier pods on 50051/TCP and kube-dns on 53.
function egressOnlyToVerifierAndDns(np, ver) {
  const failures = [];
  for (const rule of np.spec.egress || []) {
    const ports = portsOf(rule);
    const peers = rule.to || [];
    if (!peers.length || !ports.length) {
      failures.push(`${ref(np)}: an egress rule without peers or ports allows too much`);
      continue;
    }
    if (onlyDnsPorts(ports)) {
      if (!peers.every(isDnsPeer)) failures.push(`${ref(np)}: DNS egress to something other than kube-dns`);
      continue;
    }
    const toVerifier = ports.every((p) => p.port === 50051 && p.protocol === 'TCP' && !p.endPort) &&
      peers.every((peer) => peer.podSelector && !peer.namespaceSelector && !peer.ipBlock && selectorMatches(peer.podSelector, ver) && Object.keys(peer.podSelector.matchLabels || {}).length > 0);
    if (!toVerifier) failures.push(`${ref(np)}: egress beyond the verifier's port 50051 and DNS: ${JSON.stringify(rule)}`);
  }
  return failures;
}

function checkClientPolicy(objects) {
  const ver = podLabels(objects, VERIFIER);
  if (!ver) return ['verifier Deployment missing'];
  const policies = ofKind(objects, 'NetworkPolicy').filter((np) => sameMap(np.spec?.podSelector?.matchLabels, { [CLIENT_LABEL[0]]: CLIENT_LABEL[1] }));
  if (policies.length === 0) return [`no NetworkPolicy lets pods labelled ${CLIENT_LABEL.join('=')} in this namespace reach the verifier`];
  const failures = [];
  for (const np of policies) {
    if ((np.spec.ingress || []).length) failures.push(`${ref(np)}: must not open ingress to client pods`);
    failures.push(...egressOnlyToVerifierAndDns(np, ver));
  }
  return failures;
}

function checkGatewayPolicy(objects) {
  const failures = [];
  const gw = podLabels(objects, GATEWAY);
  const ver = podLabels(objects, VERIFIER);
  if (!gw || !ver) return ['gateway or verifier Deployment missing'];
  const policies = policiesFor(objects, gw);
  let publicHttp = false;
  for (const np of policies) {
    for (const rule of np.spec.ingress || []) {
      const ports = portsOf(rule);
      if (ports.length === 0) failures.push(`${ref(np)}: an ingress rule opens every port`);
      if (!rule.from?.length && ports.length === 1 && ports[0].port === 8080 && ports[0].protocol === 'TCP') publicHttp = true;
      else if (!rule.from?.length) failures.push(`${ref(np)}: ingress from anywhere on ports other than 8080`);
      for (const peer of rule.from || []) if (peer.ipBlock) failures.push(`${ref(np)}: ingress ipBlock beyond the public HTTP port`);
    }
    failures.push(...egressOnlyToVerifierAndDns(np, ver));
  }
  if (!publicHttp) failures.push('gateway: no ingress rule lets anyone reach port 8080');
  const egressPolicies = policies.filter((np) => (np.spec.policyTypes || []).includes('Egress'));
  if (!egressPolicies.length) failures.push('gateway: no policy restricts egress');
  return failures;
}

function checkVerifierIngress(objects) {
  const failures = [];
  const gw = podLabels(objects, GATEWAY);
  const ver = podLabels(objects, VERIFIER);
  if (!gw || !ver) return ['gateway or verifier Deployment missing'];
  let fromGateway = false;
  let fromClients = false;
  for (const np of policiesFor(objects, ver)) {
    for (const rule of np.spec.ingress || []) {
      const ports = portsOf(rule);
      // The admin port (/metrics): from scraper namespaces only, nothing else on that rule.
      if (ports.length && ports.every((p) => p.port === ADMIN_PORT && p.protocol === 'TCP' && !p.endPort)) {
        const scrapers = (rule.from || []).length > 0 && rule.from.every((peer) => !peer.ipBlock && !peer.podSelector &&
          sameMap(peer.namespaceSelector?.matchLabels, { [SCRAPER_LABEL[0]]: SCRAPER_LABEL[1] }) && !(peer.namespaceSelector.matchExpressions || []).length);
        if (!scrapers) failures.push(`${ref(np)}: ingress on the admin port ${ADMIN_PORT} from other than namespaces labelled ${SCRAPER_LABEL.join('=')}`);
        continue;
      }
      if (!(ports.length && ports.every((p) => p.port === 50051 && p.protocol === 'TCP' && !p.endPort))) failures.push(`${ref(np)}: ingress on ports other than 50051 (and the admin port ${ADMIN_PORT} for scrapers)`);
      if (!rule.from?.length) {
        failures.push(`${ref(np)}: ingress from anywhere`);
        continue;
      }
      for (const peer of rule.from) {
        if (peer.ipBlock) failures.push(`${ref(np)}: ingress from an ipBlock`);
        else if (peer.podSelector && !peer.namespaceSelector && selectorMatches(peer.podSelector, gw) && !selectorMatches(peer.podSelector, {})) fromGateway = true;
        else if (peer.podSelector?.matchLabels?.[CLIENT_LABEL[0]] === CLIENT_LABEL[1]) fromClients = true;
        else failures.push(`${ref(np)}: ingress from a peer that is neither the gateway nor a labelled internal client: ${JSON.stringify(peer)}`);
      }
    }
  }
  if (!fromGateway) failures.push('verifier: no ingress from the gateway pods');
  if (!fromClients) failures.push(`verifier: no ingress from pods labelled ${CLIENT_LABEL.join('=')}`);
  return failures;
}

// Every egress rule of the verifier that allows port 80 or 443 must exclude every SSRF range.
function checkVerifierEgress(objects, ssrfRanges) {
  const failures = [];
  const ver = podLabels(objects, VERIFIER);
  if (!ver) return ['verifier Deployment missing'];
  const covers = (ports, n) => ports.length === 0 || ports.some((p) => p.protocol === 'TCP' && (p.endPort ? p.port <= n && n <= p.endPort : p.port === n));
  const allowed = { v4: false, v6: false };
  const probeV4 = parseCidr('93.184.216.34');
  const probeV6 = parseCidr('2606:2800:220:1:248:1893:25c8:1946');
  let dns = false;
  let database = false;
  for (const np of policiesFor(objects, ver)) {
    if (!(np.spec.policyTypes || []).includes('Egress')) continue;
    for (const rule of np.spec.egress || []) {
      const ports = portsOf(rule);
      const peers = rule.to || [];
      if (onlyDnsPorts(ports) && peers.length && peers.every(isDnsPeer)) dns = true;
      if (ports.length && ports.every((p) => p.port === 5432) && peers.length) database = true;
      if (!covers(ports, 80) && !covers(ports, 443)) continue;
      if (!peers.length) {
        failures.push(`${ref(np)}: egress on 80/443 to any destination`);
        continue;
      }
      for (const peer of peers) {
        if (!peer.ipBlock) {
          failures.push(`${ref(np)}: egress on 80/443 to cluster pods (${JSON.stringify(peer)})`);
          continue;
        }
        const block = parseCidr(peer.ipBlock.cidr);
        const excepts = (peer.ipBlock.except || []).map((e) => parseCidr(e));
        if (!block || excepts.some((e) => !e)) {
          failures.push(`${ref(np)}: cannot parse ipBlock ${JSON.stringify(peer.ipBlock)}`);
          continue;
        }
        for (const e of excepts) if (e.family !== block.family || !(block.first <= e.first && e.last <= block.last)) failures.push(`${ref(np)}: except ${e.text} is not inside ${block.text}`);
        for (const range of ssrfRanges) {
          const part = firstAllowedPart(range, block, excepts);
          if (part) failures.push(`${ref(np)}: ipBlock ${block.text} allows ${formatAddress(range.family, part.first)} of refused range ${range.text}`);
        }
        if (firstAllowedPart(probeV4, block, excepts)) allowed.v4 = true;
        if (firstAllowedPart(probeV6, block, excepts)) allowed.v6 = true;
      }
    }
  }
  if (!dns) failures.push('verifier: no egress to kube-dns on port 53');
  if (!database) failures.push('verifier: no egress to PostgreSQL on port 5432');
  if (!allowed.v4 || !allowed.v6) failures.push('verifier: public IPv4 and IPv6 on 80/443 must be allowed (sources are fetched from the internet)');
  return failures;
}

function checkHeadless(objects) {
  const failures = [];
  const svc = byName(objects, 'Service', HEADLESS);
  if (!svc) failures.push(`no Service ${HEADLESS}`);
  else {
    if (svc.spec.clusterIP !== 'None') failures.push(`${ref(svc)}: clusterIP must be None`);
    if (!(svc.spec.ports || []).some((p) => p.port === 50051)) failures.push(`${ref(svc)}: no port 50051`);
    const v = deployment(objects, VERIFIER);
    if (!v || !sameMap(svc.spec.selector, v.spec.selector.matchLabels)) failures.push(`${ref(svc)}: does not select the verifier`);
  }
  const g = mainContainer(objects, GATEWAY);
  const env = g ? containerEnv(objects, g) : {};
  if (env.VERIFIER_ADDRESS !== VERIFIER_ADDRESS) failures.push(`gateway VERIFIER_ADDRESS is ${JSON.stringify(env.VERIFIER_ADDRESS)}, must be ${VERIFIER_ADDRESS}`);
  const v = mainContainer(objects, VERIFIER);
  const venv = v ? containerEnv(objects, v) : {};
  const age = parseDuration(String(venv.MAX_CONNECTION_AGE ?? ''));
  if (!(age > 0 && age <= 300)) failures.push(`verifier MAX_CONNECTION_AGE must be set, at most 5m (is ${venv.MAX_CONNECTION_AGE})`);
  for (const [who, e] of [[GATEWAY, env], [VERIFIER, venv]]) {
    for (const k of ['HTTP_LISTEN', 'ADMIN_LISTEN', 'GRPC_LISTEN']) {
      if (typeof e[k] === 'string' && /^(127\.|\[::1\]|localhost)/.test(e[k])) failures.push(`${who} ${k}=${e[k]} listens on loopback only`);
    }
  }
  if (g && !env.HTTP_LISTEN) failures.push('gateway HTTP_LISTEN unset: the binary defaults to loopback');
  if (v && !venv.GRPC_LISTEN) failures.push('verifier GRPC_LISTEN unset: the binary defaults to loopback');
  return failures;
}

function checkMigrations(objects) {
  const failures = [];
  const v = mainContainer(objects, VERIFIER);
  const jobs = ofKind(objects, 'Job').filter((j) => (j.spec?.template?.spec?.containers || []).some((c) => [...(c.args || []), ...(c.command || [])].includes('--migrate-only')));
  if (jobs.length !== 1) return [`${jobs.length} Jobs run --migrate-only (must be 1)`];
  const c = jobs[0].spec.template.spec.containers.find((x) => [...(x.args || []), ...(x.command || [])].includes('--migrate-only'));
  if (v && c.image !== v.image) failures.push(`${ref(jobs[0])}: image ${c.image} differs from the verifier's ${v.image}`);
  const env = containerEnv(objects, c);
  if (!env.DATABASE_URL?.from?.secretKeyRef) failures.push(`${ref(jobs[0])}: DATABASE_URL must come from a Secret`);
  if (v && !containerEnv(objects, v).DATABASE_URL?.from?.secretKeyRef) failures.push('verifier: DATABASE_URL must come from a Secret');
  return failures;
}

function checkConfigRefs(objects) {
  const failures = [];
  for (const { obj, spec } of workloads(objects)) {
    for (const c of containers(spec)) {
      for (const from of c.envFrom || []) {
        if (from.configMapRef && !byName(objects, 'ConfigMap', from.configMapRef.name)) failures.push(`${ref(obj)}: ConfigMap ${from.configMapRef.name} is not rendered`);
      }
      for (const e of c.env || []) {
        if (e.value !== undefined && /(PASSWORD|SECRET|TOKEN|DATABASE_URL)/i.test(e.name) && !/_FILE$/.test(e.name)) failures.push(`${ref(obj)}: ${e.name} given as a literal value, not from a Secret`);
        if (e.valueFrom?.configMapKeyRef && !byName(objects, 'ConfigMap', e.valueFrom.configMapKeyRef.name)) failures.push(`${ref(obj)}: ConfigMap ${e.valueFrom.configMapKeyRef.name} is not rendered`);
      }
    }
  }
  for (const cm of ofKind(objects, 'ConfigMap')) {
    for (const k of Object.keys(cm.data || {})) {
      // NAME_FILE is the path of a mounted file (apiTokens checks that it comes from a Secret).
      if (/(PASSWORD|SECRET|TOKEN|DATABASE_URL)/i.test(k) && !/_FILE$/.test(k)) failures.push(`${ref(cm)}: ${k} belongs in a Secret`);
    }
  }
  return failures;
}

// Every RPC to the verifier needs an API token (issue 9): the verifier's TOKENS_FILE and the
// gateway's VERIFIER_TOKEN_FILE are absolute paths inside a directory mounted whole (no subPath:
// a Secret update would never reach it) from a Secret volume; when the overlay renders that
// Secret, it has the file's key.
function checkApiTokens(objects) {
  const failures = [];
  for (const [n, key] of [[VERIFIER, 'TOKENS_FILE'], [GATEWAY, 'VERIFIER_TOKEN_FILE']]) {
    const c = mainContainer(objects, n);
    if (!c) {
      failures.push(`${n}: no Deployment container`);
      continue;
    }
    const path = containerEnv(objects, c)[key];
    if (typeof path !== 'string' || !path.startsWith('/')) {
      failures.push(`${n}: ${key} is not set to an absolute path (every call to the verifier needs a token)`);
      continue;
    }
    const dir = (m) => String(m.mountPath || '').replace(/\/?$/, '/');
    const mount = (c.volumeMounts || []).find((m) => path.startsWith(dir(m)));
    if (!mount) {
      failures.push(`${n}: ${key} ${path} is not under a mounted volume`);
      continue;
    }
    if (mount.subPath) failures.push(`${n}: ${key} is mounted with subPath (a Secret update would never reach it)`);
    const volume = (deployment(objects, n).spec.template.spec.volumes || []).find((v) => v.name === mount.name);
    const secretName = volume?.secret?.secretName;
    if (!secretName) {
      failures.push(`${n}: ${key} ${path} is on volume ${mount.name}, which is not a Secret`);
      continue;
    }
    const file = path.slice(dir(mount).length);
    const secret = byName(objects, 'Secret', secretName);
    if (secret && !Object.keys({ ...(secret.data || {}), ...(secret.stringData || {}) }).includes(file)) {
      failures.push(`${n}: Secret ${secretName} has no key ${file} for ${key}`);
    }
  }
  return failures;
}

function checkSecrets(objects, overlay) {
  const failures = [];
  for (const s of ofKind(objects, 'Secret')) {
    if (overlay === 'prod') {
      failures.push(`${ref(s)}: prod renders no Secret (create it out of band, deploy/README.md)`);
      continue;
    }
    const values = { ...(s.stringData || {}) };
    for (const [k, v] of Object.entries(s.data || {})) values[k] = Buffer.from(String(v), 'base64').toString('utf8');
    for (const [k, v] of Object.entries(values)) {
      if (!/example/i.test(v)) failures.push(`${ref(s)}: ${k} does not look like an example value (must contain "example")`);
    }
  }
  return failures;
}

function checkImages(objects, overlay) {
  const failures = [];
  for (const { obj, spec } of workloads(objects)) {
    for (const c of containers(spec)) {
      const image = String(c.image || '');
      const at = image.indexOf('@');
      const nameTag = at >= 0 ? image.slice(0, at) : image;
      const colon = nameTag.lastIndexOf(':');
      const tag = colon > nameTag.lastIndexOf('/') ? nameTag.slice(colon + 1) : undefined;
      if (tag === 'latest') failures.push(`${ref(obj)} container ${c.name}: image ${image} uses the latest tag`);
      else if (tag === undefined && at < 0) failures.push(`${ref(obj)} container ${c.name}: image ${image} has neither tag nor digest (means latest)`);
      if (overlay === 'prod' && !/@sha256:[0-9a-f]{64}$/.test(image)) failures.push(`${ref(obj)} container ${c.name}: prod image ${image} is not pinned by digest`);
      if (c.imagePullPolicy === 'Always' && overlay === 'prod') failures.push(`${ref(obj)} container ${c.name}: imagePullPolicy Always with a digest is pointless`);
    }
  }
  return failures;
}

function checkOverlayIntent(objects, overlay) {
  const failures = [];
  const logLevels = [GATEWAY, VERIFIER].map((n) => {
    const c = mainContainer(objects, n);
    return c ? containerEnv(objects, c).LOG_LEVEL : undefined;
  });
  if (overlay === 'dev') {
    for (const d of ofKind(objects, 'Deployment')) if (d.spec.replicas !== 1) failures.push(`${ref(d)}: dev runs 1 replica (is ${d.spec.replicas})`);
    for (const h of ofKind(objects, 'HorizontalPodAutoscaler')) if (h.spec.maxReplicas !== 1) failures.push(`${ref(h)}: dev maxReplicas must be 1`);
    if (!logLevels.every((l) => l === 'debug')) failures.push(`dev LOG_LEVEL must be debug (is ${logLevels.join(', ')})`);
  }
  if (overlay === 'prod') {
    if (logLevels.some((l) => l === 'debug' || l === 'trace')) failures.push(`prod LOG_LEVEL must not be debug/trace (is ${logLevels.join(', ')})`);
  }
  return failures;
}

// name → function(objects, overlay, ssrfRanges); in the order they are printed.
const CHECKS = {
  resources: (o) => checkResources(o),
  probes: (o) => checkProbes(o),
  securityContext: (o) => checkSecurityContext(o),
  podSecurityAdmission: (o) => checkPodSecurity(o),
  gracePeriod: (o) => checkGracePeriod(o),
  selectors: (o) => checkSelectors(o),
  scaling: (o, ov) => checkScaling(o, ov),
  defaultDeny: (o) => checkDefaultDeny(o),
  gatewayNetworkPolicy: (o) => checkGatewayPolicy(o),
  verifierIngress: (o) => checkVerifierIngress(o),
  clientNetworkPolicy: (o) => checkClientPolicy(o),
  headlessBalancing: (o) => checkHeadless(o),
  migrations: (o) => checkMigrations(o),
  configRefs: (o) => checkConfigRefs(o),
  apiTokens: (o) => checkApiTokens(o),
  secrets: (o, ov) => checkSecrets(o, ov),
  images: (o, ov) => checkImages(o, ov),
  overlayIntent: (o, ov) => checkOverlayIntent(o, ov),
};

module.exports = { CHECKS, checkVerifierEgress, parseDuration, selectorMatches, containerEnv, workloads };
