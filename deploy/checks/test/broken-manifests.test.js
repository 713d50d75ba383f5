'use strict';
// Each assertion of scripts/check-deploy, made to fail: a fresh copy of deploy/ in a temp dir,
// one deliberate break, and the named check must say FAIL (and mention what broke).
const test = require('node:test');
const assert = require('node:assert');
const yaml = require('js-yaml');
const kustomize = require('../lib/kustomize');
const { makeFixture, result } = require('./helpers');

const GW = 'deploy/k8s/base/ingest-gateway';
const VS = 'deploy/k8s/base/verifier-service';

// Runs `breakIt` on a fresh fixture, then expects check `name` to FAIL with `pattern` in its detail.
function expectFailure(title, name, pattern, breakIt, runOptions) {
  test(title, () => {
    const f = makeFixture();
    try {
      breakIt(f);
      const r = result(f.run(runOptions), name);
      assert.strictEqual(r.status, 'FAIL', `${name} should fail, got ${r.status}: ${r.detail}`);
      if (pattern) assert.match(r.detail, pattern);
    } finally {
      f.cleanup();
    }
  });
}

const container = (docs) => docs[0].spec.template.spec.containers[0];

test('the unbroken copy passes every check', () => {
  const f = makeFixture();
  try {
    const failed = f.run().filter((r) => r.status !== 'PASS');
    assert.deepStrictEqual(failed, []);
  } finally {
    f.cleanup();
  }
});

expectFailure('a kustomization naming a missing file does not render', '[dev] render', /not found/, (f) =>
  f.replace('deploy/k8s/base/kustomization.yaml', 'ingest-gateway/pdb.yaml', 'ingest-gateway/pdb-missing.yaml'));

expectFailure('kubectl and the built-in renderer disagreeing is reported', '[prod] built-in renderer agrees with kubectl', /only in kubectl/, () => {}, {
  renderer: 'auto',
  kubectlRender: (dir) => {
    const objects = kustomize.render(dir);
    objects.find((o) => o.kind === 'Deployment').spec.revisionHistoryLimit = 99;
    return objects;
  },
});

expectFailure('a string containerPort breaks the schema', '[prod] schema', /containerPort/, (f) =>
  f.editYaml(`${GW}/deployment.yaml`, (d) => { container(d).ports[0].containerPort = 'eighty'; }));

expectFailure('a misspelt field (kubernetes-models alone would accept it)', '[prod] schema', /unknown field spec.template.spec.containers\[0\].readinesProbe/, (f) =>
  f.replace(`${GW}/deployment.yaml`, 'readinessProbe:', 'readinesProbe:'));

expectFailure('a misspelt nested field', '[dev] schema', /unknown field spec.egress\[2\].to\[0\].ipBlock.exept/, (f) =>
  f.replace(`${VS}/networkpolicy.yaml`, 'cidr: 0.0.0.0/0\n            except:', 'cidr: 0.0.0.0/0\n            exept:'));

expectFailure('an unknown kind has no schema', '[dev] schema', /no schema/, (f) =>
  f.editYaml(`${GW}/pdb.yaml`, (d) => { d[0].apiVersion = 'policy/v1beta9'; }));

expectFailure('a container without limits', '[prod] resources', /Job\/verifier-service-migrate container migrate: no resources.limits.memory/, (f) =>
  f.editYaml(`${VS}/migrate-job.yaml`, (d) => { delete d[0].spec.template.spec.containers[0].resources.limits.memory; }));

expectFailure('a container without requests', '[dev] resources', /no resources.requests.cpu/, (f) =>
  f.editYaml(`${GW}/deployment.yaml`, (d) => { delete container(d).resources.requests; }));

expectFailure('a verifier without a readiness probe', '[dev] probes', /no readinessProbe/, (f) =>
  f.editYaml(`${VS}/deployment.yaml`, (d) => { delete container(d).readinessProbe; }));

expectFailure('a verifier probing over HTTP instead of grpc', '[prod] probes', /livenessProbe: must be grpc/, (f) =>
  f.editYaml(`${VS}/deployment.yaml`, (d) => { container(d).livenessProbe = { tcpSocket: { port: 50051 } }; }));

expectFailure('a verifier with TLS on its gRPC port still probing it in plaintext', '[prod-mtls] probes',
  /must be grpc on the HEALTH_LISTEN port/, (f) =>
    f.replace('deploy/k8s/overlays/prod-mtls/kustomization.yaml',
      'path: /spec/template/spec/containers/0/readinessProbe/grpc/port\n        value: 50052',
      'path: /spec/template/spec/containers/0/readinessProbe/grpc/port\n        value: 50051'));

expectFailure('a gateway liveness probe on the wrong path', '[prod] probes', /\/healthz/, (f) =>
  f.editYaml(`${GW}/deployment.yaml`, (d) => { container(d).livenessProbe.httpGet.path = '/metrics'; }));

expectFailure('a writable root filesystem', '[prod] securityContext', /readOnlyRootFilesystem/, (f) =>
  f.editYaml(`${GW}/deployment.yaml`, (d) => { container(d).securityContext.readOnlyRootFilesystem = false; }));

expectFailure('capabilities not dropped', '[dev] securityContext', /capabilities.drop/, (f) =>
  f.editYaml(`${VS}/migrate-job.yaml`, (d) => { delete d[0].spec.template.spec.containers[0].securityContext.capabilities; }));

expectFailure('privilege escalation allowed', '[dev] securityContext', /allowPrivilegeEscalation/, (f) =>
  f.editYaml(`${VS}/deployment.yaml`, (d) => { container(d).securityContext.allowPrivilegeEscalation = true; }));

expectFailure('no seccomp profile', '[prod] securityContext', /seccompProfile/, (f) =>
  f.editYaml(`${VS}/deployment.yaml`, (d) => { delete container(d).securityContext.seccompProfile; delete d[0].spec.template.spec.securityContext.seccompProfile; }));

expectFailure('root allowed', '[prod] securityContext', /runAsNonRoot/, (f) =>
  f.editYaml(`${GW}/deployment.yaml`, (d) => { delete container(d).securityContext.runAsNonRoot; delete d[0].spec.template.spec.securityContext.runAsNonRoot; }));

expectFailure('a mounted service-account token', '[prod] securityContext', /automountServiceAccountToken/, (f) =>
  f.editYaml(`${GW}/deployment.yaml`, (d) => { d[0].spec.template.spec.automountServiceAccountToken = true; }));

expectFailure('a namespace without restricted Pod Security', '[prod] podSecurityAdmission', /restricted/, (f) =>
  f.replace('deploy/k8s/overlays/prod/namespace.yaml', 'enforce: restricted', 'enforce: baseline'));

expectFailure('a grace period shorter than the drain', '[prod] gracePeriod', /terminationGracePeriodSeconds 20 must exceed/, (f) =>
  f.editYaml(`${GW}/deployment.yaml`, (d) => { d[0].spec.template.spec.terminationGracePeriodSeconds = 20; }));

expectFailure('a drain longer than the grace period (ConfigMap)', '[dev] gracePeriod', /verifier-service/, (f) =>
  f.editYaml(`${VS}/configmap.yaml`, (d) => { d[0].data.DRAIN_TIMEOUT = '1m'; }));

expectFailure('a Service whose selector matches no Deployment', '[prod] selectors', /Service\/verifier-service-headless: selects nothing/, (f) =>
  f.editYaml(`${VS}/service-headless.yaml`, (d) => { d[0].spec.selector['app.kubernetes.io/name'] = 'verifier'; }));

expectFailure('a PDB selecting with fewer labels than the Deployment', '[dev] selectors', /PodDisruptionBudget\/ingest-gateway: selector differs/, (f) =>
  f.editYaml(`${GW}/pdb.yaml`, (d) => { delete d[0].spec.selector.matchLabels['app.kubernetes.io/part-of']; }));

expectFailure('an HPA aimed at a missing Deployment', '[prod] selectors', /scaleTargetRef/, (f) =>
  f.editYaml(`${GW}/hpa.yaml`, (d) => { d[0].spec.scaleTargetRef.name = 'gateway'; }));

expectFailure('a NetworkPolicy selecting no pods', '[prod] selectors', /podSelector selects no pods/, (f) =>
  f.editYaml(`${VS}/networkpolicy.yaml`, (d) => { d[0].spec.podSelector.matchLabels['app.kubernetes.io/name'] = 'verifier'; }));

expectFailure('a verifier HPA without the queue-depth metric', '[prod] scaling', /no Pods metric/, (f) =>
  f.editYaml(`${VS}/hpa.yaml`, (d) => { d[0].spec.metrics = d[0].spec.metrics.filter((m) => m.type !== 'Pods'); }));

expectFailure('a gateway HPA without CPU', '[dev] scaling', /no CPU utilization metric/, (f) =>
  f.editYaml(`${GW}/hpa.yaml`, (d) => { d[0].spec.metrics[0].resource.name = 'memory'; }));

expectFailure('a prod PDB that blocks every eviction', '[prod] scaling', /minAvailable 3 >= HPA minReplicas 3/, (f) =>
  f.replace('deploy/k8s/overlays/prod/kustomization.yaml', 'value: 2', 'value: 3'));

expectFailure('a Deployment without a PDB', '[dev] scaling', /Deployment\/verifier-service: no PodDisruptionBudget/, (f) =>
  f.replace('deploy/k8s/base/kustomization.yaml', '  - verifier-service/pdb.yaml\n', ''));

expectFailure('no default-deny policy', '[prod] defaultDeny', /no default-deny/, (f) =>
  f.replace('deploy/k8s/base/kustomization.yaml', '  - default-deny.yaml\n', ''));

expectFailure('a workload without its own policy', '[dev] defaultDeny', /Job\/verifier-service-migrate: no NetworkPolicy of its own/, (f) =>
  f.replace('deploy/k8s/base/kustomization.yaml', '  - verifier-service/migrate-networkpolicy.yaml\n', ''));

expectFailure('a gateway that may call the internet', '[prod] gatewayNetworkPolicy', /egress beyond the verifier/, (f) =>
  f.editYaml(`${GW}/networkpolicy.yaml`, (d) => { d[0].spec.egress.push({ to: [{ ipBlock: { cidr: '0.0.0.0/0' } }], ports: [{ protocol: 'TCP', port: 443 }] }); }));

expectFailure('a gateway not reachable on 8080', '[dev] gatewayNetworkPolicy', /port 8080/, (f) =>
  f.editYaml(`${GW}/networkpolicy.yaml`, (d) => { d[0].spec.ingress[0].ports[0].port = 8081; }));

expectFailure('a verifier open to every namespace', '[prod] verifierIngress', /neither the gateway nor a labelled internal client/, (f) =>
  f.editYaml(`${VS}/networkpolicy.yaml`, (d) => { d[0].spec.ingress[0].from.push({ namespaceSelector: {} }); }));

expectFailure('a verifier without the gateway among its clients', '[dev] verifierIngress', /no ingress from the gateway/, (f) =>
  f.editYaml(`${VS}/networkpolicy.yaml`, (d) => { d[0].spec.ingress[0].from.shift(); }));

expectFailure('internal clients allowed anywhere', '[prod] clientNetworkPolicy', /egress beyond the verifier/, (f) =>
  f.editYaml(`${VS}/client-networkpolicy.yaml`, (d) => { d[0].spec.egress[0].to[0] = { namespaceSelector: {} }; }));

expectFailure('no policy for internal clients of this namespace', '[dev] clientNetworkPolicy', /no NetworkPolicy lets pods/, (f) =>
  f.replace('deploy/k8s/base/kustomization.yaml', '  - verifier-service/client-networkpolicy.yaml\n', ''));

expectFailure('a verifier that may fetch cloud metadata', '[prod] verifierEgress', /169\.254\.0\.0 of refused range 169\.254\.0\.0\/16/, (f) =>
  f.editYaml(`${VS}/networkpolicy.yaml`, (d) => {
    const block = d[0].spec.egress[2].to[0].ipBlock;
    block.except = block.except.filter((c) => c !== '169.254.0.0/16');
  }));

expectFailure('a verifier allowed all of IPv6', '[dev] verifierEgress', /outside 2000::\/3/, (f) =>
  f.editYaml(`${VS}/networkpolicy.yaml`, (d) => { d[0].spec.egress[2].to[1].ipBlock.cidr = '::/0'; }));

expectFailure('a verifier allowed to fetch from cluster pods on 80', '[prod] verifierEgress', /to cluster pods/, (f) =>
  f.editYaml(`${VS}/networkpolicy.yaml`, (d) => { d[0].spec.egress[2].to.push({ podSelector: {} }); }));

expectFailure('a verifier without DNS', '[prod] verifierEgress', /kube-dns/, (f) =>
  f.editYaml(`${VS}/networkpolicy.yaml`, (d) => { d[0].spec.egress.shift(); }));

test('a missing SSRF policy is skipped loudly, and fails under CI=true', () => {
  const f = makeFixture();
  try {
    const fs = require('fs');
    fs.rmSync(f.shared, { recursive: true });
    const local = result(f.run({ ci: false }), 'ssrf policy');
    assert.strictEqual(local.status, 'SKIP');
    assert.match(local.detail, /NOT checked/);
    const ci = result(f.run({ ci: true }), 'ssrf policy');
    assert.strictEqual(ci.status, 'FAIL');
  } finally {
    f.cleanup();
  }
});

expectFailure('a gateway dialing the ClusterIP Service', '[prod] headlessBalancing', /VERIFIER_ADDRESS/, (f) =>
  f.editYaml(`${GW}/configmap.yaml`, (d) => { d[0].data.VERIFIER_ADDRESS = 'verifier-service:50051'; }));

expectFailure('a verifier listening on loopback', '[dev] headlessBalancing', /loopback/, (f) =>
  f.editYaml(`${VS}/configmap.yaml`, (d) => { d[0].data.GRPC_LISTEN = '127.0.0.1:50051'; }));

expectFailure('a migrations Job that does not migrate', '[prod] migrations', /0 Jobs run --migrate-only/, (f) =>
  f.editYaml(`${VS}/migrate-job.yaml`, (d) => { delete d[0].spec.template.spec.containers[0].args; }));

expectFailure('a ConfigMap reference that does not resolve', '[dev] configRefs', /ConfigMap verifier-config is not rendered/, (f) =>
  f.editYaml(`${VS}/deployment.yaml`, (d) => { container(d).envFrom[0].configMapRef.name = 'verifier-config'; }));

expectFailure('a database URL in a ConfigMap', '[prod] configRefs', /DATABASE_URL belongs in a Secret/, (f) =>
  f.editYaml(`${VS}/configmap.yaml`, (d) => { d[0].data.DATABASE_URL = 'postgresql://x'; }));

expectFailure('a Secret rendered in prod', '[prod] secrets', /prod renders no Secret/, (f) => {
  f.write('deploy/k8s/overlays/prod/secret.yaml', f.read('deploy/k8s/overlays/dev/database-secret.example.yaml'));
  f.replace('deploy/k8s/overlays/prod/kustomization.yaml', '  - ../../base\n', '  - ../../base\n  - secret.yaml\n');
});

expectFailure('a real-looking password in the dev Secret', '[dev] secrets', /example/, (f) =>
  f.replace('deploy/k8s/overlays/dev/database-secret.example.yaml', 'portcullis:example-only@', 'portcullis:hunter2@'));

expectFailure('latest in prod', '[prod] images', /latest/, (f) =>
  f.replace('deploy/k8s/overlays/prod/kustomization.yaml',
    '    digest: sha256:0000000000000000000000000000000000000000000000000000000000000000\n  - name: portcullis/verifier-service',
    '    newTag: latest\n  - name: portcullis/verifier-service'));

expectFailure('a dev overlay that forgot debug logs', '[dev] overlayIntent', /LOG_LEVEL must be debug/, (f) =>
  f.replace('deploy/k8s/overlays/dev/kustomization.yaml', 'value: debug', 'value: info'));

// Dockerfiles.
const VDF = 'deploy/docker/verifier-service.Dockerfile';
const GDF = 'deploy/docker/ingest-gateway.Dockerfile';

expectFailure('an unpinned base', 'dockerfile verifier-service: pinnedBase', /not pinned/, (f) =>
  f.replace(VDF, /ARG DEBIAN_IMAGE=.*/.exec(f.read(VDF))[0], 'ARG DEBIAN_IMAGE=debian:bookworm-slim'));

expectFailure('another base image', 'dockerfile ingest-gateway: pinnedBase', /not debian:bookworm-slim/, (f) =>
  f.replace(GDF, 'FROM ${DEBIAN_IMAGE} AS runtime', 'FROM ubuntu@sha256:1111111111111111111111111111111111111111111111111111111111111111 AS runtime'));

expectFailure('no USER', 'dockerfile verifier-service: nonRootUser', /no USER/, (f) =>
  f.replace(VDF, 'USER 65532:65532\n', ''));

expectFailure('USER root by name', 'dockerfile ingest-gateway: nonRootUser', /numeric/, (f) =>
  f.replace(GDF, 'USER 65532:65532', 'USER root'));

expectFailure('a secret in ENV', 'dockerfile verifier-service: noSecrets', /DATABASE_URL carries a value/, (f) =>
  f.replace(VDF, 'ENV GRPC_LISTEN=0.0.0.0:50051', 'ENV GRPC_LISTEN=0.0.0.0:50051 DATABASE_URL=postgresql://portcullis:pw@db/portcullis'));

expectFailure('a key file copied in', 'dockerfile ingest-gateway: noSecrets', /secret file/, (f) =>
  f.replace(GDF, 'WORKDIR /src\n', 'WORKDIR /src\nCOPY deploy/tls.key /src/\n'));

expectFailure('a shell-form ENTRYPOINT', 'dockerfile verifier-service: entrypoint', /exec form/, (f) =>
  f.replace(VDF, 'ENTRYPOINT ["/usr/local/bin/verifier-service"]', 'ENTRYPOINT /usr/local/bin/verifier-service'));

expectFailure('the build stage missing a -dev package of common.sh', 'dockerfile verifier-service: buildPackages', /lacks libpqxx-dev/, (f) =>
  f.replace(VDF, 'libpqxx-dev ', ''));

expectFailure('manifests running as another UID than the image', 'dockerfile verifier-service: manifests run as the image\'s USER 65532', /runs as 1000/, (f) =>
  f.editYaml(`${VS}/deployment.yaml`, (d) => { d[0].spec.template.spec.securityContext.runAsUser = 1000; }));

expectFailure('a .dockerignore that sends .git', '.dockerignore', /\.git/, (f) =>
  f.replace('.dockerignore', '.git\n', ''));

// The manifests against the C++ sources (lib/source.js).
expectFailure('an HPA metric the verifier does not register', '[prod] sourceAgreement', /portcullis_verifier_queue_length is not registered/, (f) =>
  f.replace(`${VS}/hpa.yaml`, 'name: portcullis_verifier_queue_depth', 'name: portcullis_verifier_queue_length'));

expectFailure('the verifier renaming its metric under the HPA', '[dev] sourceAgreement', /portcullis_verifier_verifications_in_flight is not registered/, (f) =>
  f.replace('verifier-service/src/server/verifier_metrics.h', '"portcullis_verifier_verifications_in_flight"', '"portcullis_verifier_busy_workers"'));

expectFailure('a ConfigMap key the binary does not read', '[prod] sourceAgreement', /FETCH_TIMEOUTS is not read by verifier-service/, (f) =>
  f.replace(`${VS}/configmap.yaml`, 'FETCH_TIMEOUT:', 'FETCH_TIMEOUTS:'));

// The variables are read from each setting's declaration (PORTCULLIS_SETTING), wherever it lives.
expectFailure('the verifier no longer declaring a setting its ConfigMap sets', '[prod] sourceAgreement', /FETCH_TIMEOUT is not read by verifier-service/, (f) =>
  f.replace('verifier-service/src/verifier_flags.cc', 'fetch_timeout, "FETCH_TIMEOUT"', 'fetch_timeout, "FETCH_DEADLINE"'));

expectFailure('no settings found where the sources declare them', '[dev] sourceAgreement', /no environment variables found in ingest-gateway/, (f) =>
  f.write('ingest-gateway/src/gateway_config.cc', '// settings moved elsewhere\n'));

expectFailure('the HPA reading metrics the verifier does not serve (no ADMIN_LISTEN)', '[prod] sourceAgreement', /ADMIN_LISTEN is ""/, (f) =>
  f.replace(`${VS}/configmap.yaml`, 'ADMIN_LISTEN: "0.0.0.0:9090"', 'ADMIN_LISTEN: ""'));

expectFailure('the admin port not declared by the pod', '[prod] sourceAgreement', /ADMIN_LISTEN port 9191 is not a containerPort/, (f) =>
  f.replace(`${VS}/configmap.yaml`, 'ADMIN_LISTEN: "0.0.0.0:9090"', 'ADMIN_LISTEN: "0.0.0.0:9191"'));

expectFailure('an in-flight target no pod can reach', '[prod] sourceAgreement', /in-flight target 1500 must be above 0 and below MAX_VERIFICATIONS_IN_FLIGHT 1000/, (f) =>
  f.editYaml(`${VS}/hpa.yaml`, (d) => { d[0].spec.metrics.find((m) => m.type === 'Pods').pods.target.averageValue = '1500'; }));

expectFailure('an in-flight target at the cap', '[dev] sourceAgreement', /in-flight target 1k must be above 0 and below MAX_VERIFICATIONS_IN_FLIGHT 1000/, (f) =>
  f.editYaml(`${VS}/hpa.yaml`, (d) => { d[0].spec.metrics.find((m) => m.type === 'Pods').pods.target.averageValue = '1k'; }));

expectFailure('the in-flight cap left to the binary\'s default', '[prod] sourceAgreement', /does not set MAX_VERIFICATIONS_IN_FLIGHT/, (f) =>
  f.replace(`${VS}/configmap.yaml`, '\n  MAX_VERIFICATIONS_IN_FLIGHT: "1000"', ''));

expectFailure('an in-flight cap lowered under the target', '[prod] sourceAgreement', /below MAX_VERIFICATIONS_IN_FLIGHT 100\b/, (f) =>
  f.replace(`${VS}/configmap.yaml`, 'MAX_VERIFICATIONS_IN_FLIGHT: "1000"', 'MAX_VERIFICATIONS_IN_FLIGHT: "100"'));

// The rule before the event-driven worker compared the target with WORKERS, the threads that
// once each held one verification; they no longer bound it, so few of them must not fail it.
test('an in-flight target above WORKERS passes (WORKERS no longer caps verifications in flight)', () => {
  const f = makeFixture();
  try {
    f.replace(`${VS}/configmap.yaml`, '  FETCH_TIMEOUT:', '  WORKERS: "4"\n  FETCH_TIMEOUT:');
    const r = result(f.run(), '[prod] sourceAgreement');
    assert.strictEqual(r.status, 'PASS', r.detail);
  } finally {
    f.cleanup();
  }
});

expectFailure('the SSRF allow list set in a cluster', '[dev] sourceAgreement', /EGRESS_ALLOW_CIDRS/, (f) =>
  f.replace(`${VS}/configmap.yaml`, '  FETCH_TIMEOUT:', '  EGRESS_ALLOW_CIDRS: "10.0.0.0/8"\n  FETCH_TIMEOUT:'));

expectFailure('the verifier\'s /metrics open to every pod', '[prod] verifierIngress', /admin port 9090/, (f) =>
  f.replace(`${VS}/networkpolicy.yaml`, 'portcullis.dev/metrics-scraper: "true"', 'portcullis.dev/anything: "true"'));

test('kustomize fixture YAML stays loadable (sanity of the helpers)', () => {
  const f = makeFixture();
  try {
    f.editYaml(`${GW}/hpa.yaml`, () => {});
    assert.strictEqual(yaml.load(f.read(`${GW}/hpa.yaml`)).kind, 'HorizontalPodAutoscaler');
  } finally {
    f.cleanup();
  }
});

expectFailure('the verifier without TOKENS_FILE', '[prod] apiTokens', /verifier-service: TOKENS_FILE is not set/, (f) =>
  f.replace(`${VS}/configmap.yaml`, '  TOKENS_FILE: "/etc/portcullis/tokens/tokens"\n', ''));

expectFailure('the gateway token on an emptyDir, not a Secret', '[dev] apiTokens', /VERIFIER_TOKEN_FILE .* not a Secret/, (f) =>
  f.editYaml(`${GW}/deployment.yaml`, (d) => {
    const volume = d[0].spec.template.spec.volumes.find((v) => v.name === 'verifier-token');
    delete volume.secret;
    volume.emptyDir = {};
  }));

expectFailure('the gateway token mounted with subPath', '[prod] apiTokens', /subPath/, (f) =>
  f.editYaml(`${GW}/deployment.yaml`, (d) => {
    container(d).volumeMounts.find((m) => m.name === 'verifier-token').subPath = 'token';
  }));

expectFailure('the dev tokens Secret without the file TOKENS_FILE names', '[dev] apiTokens', /has no key tokens/, (f) =>
  f.replace('deploy/k8s/overlays/dev/api-tokens.example.yaml', '  tokens: |', '  token-lines: |'));
