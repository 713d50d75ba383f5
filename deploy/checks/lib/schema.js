'use strict';
// Validates rendered objects against the Kubernetes OpenAPI schemas that npm kubernetes-models
// compiles (types, formats, required fields, enums). Objects whose apiVersion/kind it does not
// know fail: a typo in a kind must not pass as "unknown, skipped".

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

function validateObject(obj) {
  const Model = modelFor(obj);
  if (!Model) return [`no schema for apiVersion ${obj.apiVersion} kind ${obj.kind}`];
  try {
    new Model(obj).validate();
    return [];
  } catch (e) {
    return [String(e.message).split('\n').slice(0, 5).join('; ')];
  }
}

module.exports = { validateObject };
