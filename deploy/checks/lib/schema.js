'use strict';
// Validates rendered objects against the Kubernetes OpenAPI schemas that npm kubernetes-models
// compiles (types, formats, required fields, enums), and refuses fields the API does not have.
// Objects whose apiVersion/kind it does not know fail: a typo in a kind must not pass as
// "unknown, skipped".

function modelFor(obj) {
  const av = String(obj.apiVersion || '');
  const i = av.indexOf('/');
  const modulePath = i < 0 ? `kubernetes-models/${av}` : `kubernetes-models/${av.slice(0, i)}/${av.slice(i + 1)}`;
  let mod;
  try {
    mod = require(modulePath);
  } catch (e) {
    return null;
  }
  return mod[obj.kind] || null;
}

function validateTypes(obj) {
  const Model = modelFor(obj);
  if (!Model) return [`no schema for apiVersion ${obj.apiVersion} kind ${obj.kind}`];
  try {
    new Model(obj).validate();
    return [];
  } catch (e) {
    return [String(e.message).split('\n').slice(0, 5).join('; ')];
  }
}


// ---- unknown fields -----------------------------------------------------------------------
// kubernetes-models' validators accept fields the API does not have (a typo such as
// "readinesProbe" passes), while `kubectl apply` (strict field validation, the default since
// Kubernetes 1.27) refuses them. The field lists of every type are read from the package's
// TypeScript declarations (generated from the same OpenAPI schema) and every object is walked.
const fs = require('fs');
const path = require('path');

const interfaces = new Map(); // .d.ts file → {fields: Map(name → typeText), imports: Map(name → file)} | null

function modelsRoot() {
  return path.dirname(require.resolve('kubernetes-models/package.json'));
}

function resolveImport(fromFile, spec) {
  if (spec.startsWith('.')) return path.resolve(path.dirname(fromFile), `${spec}.d.ts`);
  const parts = spec.split('/');
  const pkgName = spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  const rest = parts.slice(pkgName.split('/').length).join('/');
  let pkgDir;
  try {
    pkgDir = path.dirname(require.resolve(`${pkgName}/package.json`, { paths: [path.dirname(fromFile), modelsRoot()] }));
  } catch (e) {
    return null;
  }
  return path.join(pkgDir, `${rest}.d.ts`);
}

function loadInterface(file) {
  if (interfaces.has(file)) return interfaces.get(file);
  let result = null;
  if (file && fs.existsSync(file)) {
    const text = fs.readFileSync(file, 'utf8');
    const imports = new Map();
    for (const m of text.matchAll(/^import \{ ([^}]+) \} from "([^"]+)";/gm)) {
      for (const n of m[1].split(',').map((s) => s.trim())) imports.set(n, resolveImport(file, m[2]));
    }
    const body = text.match(/^export interface I\w+(?: extends [\w, ]+)? \{\n([\s\S]*?)^\}/m);
    if (body) {
      const fields = new Map();
      // `    "name"?: Type;` where Type may span lines ({ [key: string]: X; }).
      const src = body[1].replace(/\/\*\*[\s\S]*?\*\//g, '');
      for (const m of src.matchAll(/^ {4}"([^"]+)"\??: ([^;{]*(?:\{[^}]*\}[^;]*)?);$/gm)) {
        fields.set(m[1], m[2].replace(/\s+/g, ' ').replace(/; \}/, ' }'));
      }
      result = { fields, imports };
    }
  }
  interfaces.set(file, result);
  return result;
}

function walk(value, typeText, owner, where, out) {
  if (value === null || value === undefined) return;
  let t = typeText.trim();
  let m = t.match(/^Array<(.+)>$/);
  if (m) {
    if (Array.isArray(value)) value.forEach((v, i) => walk(v, m[1], owner, `${where}[${i}]`, out));
    return;
  }
  m = t.match(/^\{\s*\[key: string\]: (.+)\s*\}$/);
  if (m) {
    if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) walk(v, m[1], owner, `${where}.${k}`, out);
    return;
  }
  if (!/^I\w+$/.test(t) || !owner.imports.has(t)) return; // primitives, literal unions, unknown
  const iface = loadInterface(owner.imports.get(t));
  if (!iface || typeof value !== 'object' || Array.isArray(value)) return; // type aliases (IntOrString, Quantity, …)
  checkFields(value, iface, where, out);
}

function checkFields(obj, iface, where, out) {
  if (iface.fields.size === 0) return; // free-form objects
  for (const [k, v] of Object.entries(obj)) {
    if (!iface.fields.has(k)) out.push(`unknown field ${where ? `${where}.` : ''}${k}`);
    else walk(v, iface.fields.get(k), iface, where ? `${where}.${k}` : k, out);
  }
}

function unknownFields(obj) {
  const av = String(obj.apiVersion || '');
  const i = av.indexOf('/');
  const dir = i < 0 ? av : `${av.slice(0, i)}/${av.slice(i + 1)}`;
  const iface = loadInterface(path.join(modelsRoot(), dir, `${obj.kind}.d.ts`));
  if (!iface) return [`no type declarations for ${obj.apiVersion} ${obj.kind}`];
  const out = [];
  checkFields(obj, iface, '', out);
  return out;
}

// Type errors first; unknown fields once the types are right.
function validateObject(obj) {
  const errors = validateTypes(obj);
  return errors.length ? errors : unknownFields(obj);
}

module.exports = { validateObject, unknownFields };
