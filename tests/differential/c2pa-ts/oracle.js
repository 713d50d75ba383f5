// The c2pa-ts library (npm "@trustnxt/c2pa-ts", pure TypeScript) as the maker of C2PA test
// vectors and as a differential oracle for verifier-service/src/c2pa:
//
//   node oracle.js sign IN OUT KEY_PEM CERT_PEM ALG [--source TYPE] [--tsa TSA_KEY TSA_CERT] [--v2]
//       writes OUT: IN (a JPEG or PNG) with a C2PA manifest signed by KEY_PEM (any PEM private
//       key) and CERT_PEM (its certificate) with COSE algorithm ALG (ES256, ES384, ES512, PS256,
//       PS384, PS512, Ed25519): a c2pa.hash.data hard binding and, with --source, a c2pa.actions
//       assertion with one c2pa.created action declaring that digitalSourceType; with --tsa, an
//       RFC 3161 time-stamp (sigTst2) made by the library's LocalTimestampProvider with that
//       time-stamping key and certificate; with --v2, a c2pa.claim.v2 (the default is a v1 claim).
//   node oracle.js validate FILE
//       prints {"manifest": bool, "valid": bool, "codes": [{"code", "success"}], "error": str}:
//       what the library's own validator says of FILE (it does not evaluate chains of trust).
'use strict';

const fs = require('fs');
const crypto = require('crypto');

async function load() {
  const [asset, cose, manifest, jumbf, rfc3161, x509] = await Promise.all([
    import('@trustnxt/c2pa-ts/asset'),
    import('@trustnxt/c2pa-ts/cose'),
    import('@trustnxt/c2pa-ts/manifest'),
    import('@trustnxt/c2pa-ts/jumbf'),
    import('@trustnxt/c2pa-ts/rfc3161'),
    import('@peculiar/x509'),
  ]);
  return { ...asset, ...cose, ...manifest, ...jumbf, ...rfc3161, X509Certificate: x509.X509Certificate };
}

function openAsset(lib, bytes) {
  if (lib.JPEG.canRead(bytes)) return new lib.JPEG(bytes);
  if (lib.PNG.canRead(bytes)) return new lib.PNG(bytes);
  throw new Error('neither JPEG nor PNG');
}

function pkcs8(keyPem) {
  return new Uint8Array(crypto.createPrivateKey(fs.readFileSync(keyPem)).export({ type: 'pkcs8', format: 'der' }));
}

async function sign(lib, inFile, outFile, keyPem, certPem, alg, options) {
  let sourceType = '';
  let timestampProvider;
  let claimVersion = lib.ClaimVersion.V1;
  for (let i = 0; i < options.length; ++i) {
    if (options[i] === '--source' && i + 1 < options.length) {
      sourceType = options[++i];
    } else if (options[i] === '--tsa' && i + 2 < options.length) {
      const tsaKey = options[++i];
      const tsaCert = new lib.X509Certificate(fs.readFileSync(options[++i], 'utf8'));
      timestampProvider = new lib.LocalTimestampProvider(tsaCert, pkcs8(tsaKey));
    } else if (options[i] === '--v2') {
      claimVersion = lib.ClaimVersion.V2;
    } else {
      throw new Error(`unknown option ${options[i]}`);
    }
  }
  const asset = openAsset(lib, fs.readFileSync(inFile));
  const certificate = new lib.X509Certificate(fs.readFileSync(certPem, 'utf8'));
  const key = pkcs8(keyPem);
  const algorithm = lib.CoseAlgorithmIdentifier[alg];
  if (algorithm === undefined) throw new Error(`unknown algorithm ${alg}`);
  const signer = new lib.LocalSigner(key, algorithm, certificate, []);
  const store = new lib.ManifestStore();
  const manifest = store.createManifest({
    claimVersion,
    assetFormat: asset.mimeType,
    instanceID: 'xmp:iid:portcullis-test',
    defaultHashAlgorithm: 'SHA-256',
    signer,
  });
  if (sourceType) {
    const actions = new lib.ActionAssertion();
    actions.actions.push({ action: 'c2pa.created', digitalSourceType: sourceType });
    manifest.addAssertion(actions);
  }
  const dataHash = lib.DataHashAssertion.create('SHA-256');
  manifest.addAssertion(dataHash);
  await asset.ensureManifestSpace(store.measureSize());
  await dataHash.updateWithAsset(asset);
  await manifest.sign(signer, timestampProvider);
  await asset.writeManifestJUMBF(store.getBytes());
  fs.writeFileSync(outFile, await asset.getDataRange());
}

async function validate(lib, file) {
  const out = { manifest: false, valid: false, codes: [], error: '' };
  try {
    const asset = openAsset(lib, fs.readFileSync(file));
    const jumbf = asset.getManifestJUMBF();
    if (!jumbf) return out;
    out.manifest = true;
    const store = lib.ManifestStore.read(lib.SuperBox.fromBuffer(jumbf));
    const result = await store.validate(asset);
    out.valid = result.isValid;
    out.codes = result.statusEntries.map((e) => ({ code: e.code, success: e.success === true }));
  } catch (e) {
    out.error = String(e && e.message ? e.message : e);
  }
  return out;
}

(async () => {
  const [command, ...args] = process.argv.slice(2);
  const lib = await load();
  if (command === 'sign' && args.length >= 5) {
    await sign(lib, ...args.slice(0, 5), args.slice(5));
  } else if (command === 'validate' && args.length === 1) {
    process.stdout.write(JSON.stringify(await validate(lib, args[0])) + '\n');
  } else {
    process.stderr.write('usage: oracle.js sign IN OUT KEY_PEM CERT_PEM ALG [--source TYPE] [--tsa KEY CERT] | validate FILE\n');
    process.exit(2);
  }
})().catch((e) => {
  process.stderr.write(`oracle: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
