'use strict';
// A small renderer for the subset of kustomize that deploy/k8s uses, for machines without a
// kubectl that embeds kustomize v4 or later. When such a kubectl is present, scripts/check-deploy
// renders with it and checks that this renderer produces the same objects.
//
// Supported: resources (files and directories), namespace, replicas, images (newName, newTag,
// digest), patches with a target and an inline or file RFC 6902 JSON patch. Anything else in a
// kustomization is an error, not silently ignored. Order of transformers as in kustomize:
// patches, namespace, replicas, images.
const fs = require('fs');
const path = require('path');
const yaml = require('js-yaml');

const SUPPORTED_FIELDS = new Set(['apiVersion', 'kind', 'resources', 'namespace', 'replicas', 'images', 'patches']);
const CLUSTER_SCOPED = new Set([
  'Namespace', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'PersistentVolume',
  'StorageClass', 'PriorityClass', 'IngressClass', 'RuntimeClass', 'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration', 'APIService', 'Node', 'CSIDriver', 'VolumeAttachment',
]);
const REPLICA_KINDS = new Set(['Deployment', 'ReplicaSet', 'StatefulSet', 'ReplicationController']);

function loadYamlDocs(text, file) {
  try {
    return yaml.loadAll(text).filter((d) => d !== null && d !== undefined);
  } catch (e) {
    throw new Error(`${file}: ${e.message}`);
  }
}

function kustomizationFile(dir) {
  for (const name of ['kustomization.yaml', 'kustomization.yml', 'Kustomization']) {
    const f = path.join(dir, name);
    if (fs.existsSync(f)) return f;
  }
  throw new Error(`${dir}: no kustomization.yaml`);
}

function groupVersion(obj) {
  const av = obj.apiVersion || '';
  const i = av.indexOf('/');
  return i < 0 ? { group: '', version: av } : { group: av.slice(0, i), version: av.slice(i + 1) };
}

function anchored(pattern) {
  return new RegExp(`^(?:${pattern})$`);
}

function selects(target, obj) {
  const gv = groupVersion(obj);
  if (target.group !== undefined && target.group !== gv.group) return false;
  if (target.version !== undefined && target.version !== gv.version) return false;
  if (target.kind !== undefined && target.kind !== obj.kind) return false;
  if (target.name !== undefined && !anchored(target.name).test(obj.metadata?.name ?? '')) return false;
  if (target.namespace !== undefined && !anchored(target.namespace).test(obj.metadata?.namespace ?? '')) return false;
  for (const key of Object.keys(target)) {
    if (!['group', 'version', 'kind', 'name', 'namespace'].includes(key)) {
      throw new Error(`patch target field ${key} is not supported by the built-in renderer`);
    }
  }
  return true;
}

// RFC 6901 pointer → [parent, key] inside `doc`.
function resolvePointer(doc, pointer, forAdd) {
  if (pointer === '') return [null, null];
  if (!pointer.startsWith('/')) throw new Error(`JSON pointer ${pointer} must start with /`);
  const tokens = pointer.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
  let parent = doc;
  for (let i = 0; i < tokens.length - 1; i++) {
    const t = tokens[i];
    const next = Array.isArray(parent) ? parent[Number(t)] : parent?.[t];
    if (next === undefined || next === null || typeof next !== 'object') {
      throw new Error(`JSON pointer ${pointer}: ${tokens.slice(0, i + 1).join('/')} does not exist`);
    }
    parent = next;
  }
  const key = tokens[tokens.length - 1];
  if (Array.isArray(parent)) {
    if (key === '-' && forAdd) return [parent, parent.length];
    if (!/^(0|[1-9][0-9]*)$/.test(key)) throw new Error(`JSON pointer ${pointer}: bad array index`);
    const idx = Number(key);
    if (idx > parent.length || (!forAdd && idx >= parent.length)) throw new Error(`JSON pointer ${pointer}: index out of range`);
    return [parent, idx];
  }
  if (!forAdd && !Object.prototype.hasOwnProperty.call(parent, key)) {
    throw new Error(`JSON pointer ${pointer}: does not exist`);
  }
  return [parent, key];
}

function clone(v) {
  return v === undefined ? undefined : JSON.parse(JSON.stringify(v));
}

function applyJsonPatch(doc, ops) {
  if (!Array.isArray(ops)) throw new Error('only RFC 6902 JSON patches (a list of operations) are supported');
  for (const op of ops) {
    switch (op.op) {
      case 'add': {
        const [parent, key] = resolvePointer(doc, op.path, true);
        if (Array.isArray(parent)) parent.splice(key, 0, clone(op.value));
        else parent[key] = clone(op.value);
        break;
      }
      case 'replace': {
        const [parent, key] = resolvePointer(doc, op.path, false);
        parent[key] = clone(op.value);
        break;
      }
      case 'remove': {
        const [parent, key] = resolvePointer(doc, op.path, false);
        if (Array.isArray(parent)) parent.splice(key, 1);
        else delete parent[key];
        break;
      }
      case 'test': {
        const [parent, key] = resolvePointer(doc, op.path, false);
        if (JSON.stringify(parent[key]) !== JSON.stringify(op.value)) throw new Error(`JSON patch test failed at ${op.path}`);
        break;
      }
      default:
        throw new Error(`JSON patch op ${op.op} is not supported by the built-in renderer`);
    }
  }
}

// "name[:tag][@digest]" → {name, tag, digest}; a ":" after the last "/" starts the tag.
function splitImage(image) {
  let rest = image;
  let digest;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  let tag;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  return { name: rest, tag, digest };
}

function podSpecs(obj) {
  const specs = [];
  const spec = obj.spec;
  if (!spec) return specs;
  if (spec.containers) specs.push(spec);
  if (spec.template?.spec) specs.push(spec.template.spec);
  if (spec.jobTemplate?.spec?.template?.spec) specs.push(spec.jobTemplate.spec.template.spec);
  return specs;
}

function applyImages(objects, images) {
  for (const obj of objects) {
    for (const spec of podSpecs(obj)) {
      for (const list of ['initContainers', 'containers', 'ephemeralContainers']) {
        for (const c of spec[list] || []) {
          if (typeof c.image !== 'string') continue;
          const img = splitImage(c.image);
          const rule = images.find((r) => r.name === img.name);
          if (!rule) continue;
          let name = rule.newName ?? img.name;
          let tag = img.tag;
          let digest = img.digest;
          if (rule.newTag !== undefined) {
            tag = String(rule.newTag);
            digest = undefined;
          }
          if (rule.digest !== undefined) {
            digest = rule.digest;
            tag = undefined;
          }
          c.image = name + (tag !== undefined ? `:${tag}` : '') + (digest !== undefined ? `@${digest}` : '');
        }
      }
    }
  }
}

function render(dir) {
  const file = kustomizationFile(dir);
  const [k] = loadYamlDocs(fs.readFileSync(file, 'utf8'), file);
  for (const key of Object.keys(k || {})) {
    if (!SUPPORTED_FIELDS.has(key)) throw new Error(`${file}: field ${key} is not supported by the built-in renderer`);
  }
  let objects = [];
  for (const entry of k.resources || []) {
    const p = path.join(dir, entry);
    if (!fs.existsSync(p)) throw new Error(`${file}: resource ${entry} not found`);
    if (fs.statSync(p).isDirectory()) objects.push(...render(p));
    else objects.push(...loadYamlDocs(fs.readFileSync(p, 'utf8'), p));
  }
  const ids = new Set();
  for (const o of objects) {
    const id = `${o.apiVersion}/${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;
    if (ids.has(id)) throw new Error(`${file}: ${id} is defined twice`);
    ids.add(id);
  }
  for (const patch of k.patches || []) {
    if (!patch.target) throw new Error(`${file}: a patch without a target is not supported by the built-in renderer`);
    let ops;
    if (patch.patch !== undefined) ops = yaml.load(patch.patch);
    else if (patch.path !== undefined) ops = yaml.load(fs.readFileSync(path.join(dir, patch.path), 'utf8'));
    else throw new Error(`${file}: patch needs patch or path`);
    const targets = objects.filter((o) => selects(patch.target, o));
    if (targets.length === 0) throw new Error(`${file}: patch target ${JSON.stringify(patch.target)} matches nothing`);
    for (const t of targets) {
      try {
        applyJsonPatch(t, ops);
      } catch (e) {
        throw new Error(`${file}: patch on ${t.kind}/${t.metadata.name}: ${e.message}`);
      }
    }
  }
  if (k.namespace) {
    for (const o of objects) {
      if (!CLUSTER_SCOPED.has(o.kind)) {
        o.metadata = o.metadata || {};
        o.metadata.namespace = k.namespace;
      }
    }
  }
  for (const r of k.replicas || []) {
    for (const o of objects) {
      if (REPLICA_KINDS.has(o.kind) && o.metadata?.name === r.name) {
        o.spec = o.spec || {};
        o.spec.replicas = r.count;
      }
    }
  }
  if (k.images) applyImages(objects, k.images);
  return objects;
}

module.exports = { render, applyJsonPatch, splitImage, loadYamlDocs, podSpecs };
