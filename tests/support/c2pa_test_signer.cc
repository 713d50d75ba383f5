#include "tests/support/c2pa_test_signer.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/ts.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "verifier-service/src/c2pa/cose_sign1.h"
#include "verifier-service/src/c2pa/jumbf.h"

namespace portcullis::testing {
namespace {

using verifier::c2pa::C2paUuid;
using verifier::c2pa::MediaType;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::abort();  // A test helper: OpenSSL refusing our own fixed inputs is a bug here.
  }
  (void)what;
}

// --- CBOR, written by hand: definite lengths, fixed-width where sizes must not move.
std::string Head(uint8_t major, uint64_t value) {
  std::string out;
  const uint8_t type = static_cast<uint8_t>(major << 5);
  if (value < 24) {
    out.push_back(static_cast<char>(type | value));
  } else if (value <= 0xFF) {
    out.push_back(static_cast<char>(type | 24));
    out.push_back(static_cast<char>(value));
  } else if (value <= 0xFFFF) {
    out.push_back(static_cast<char>(type | 25));
    out.push_back(static_cast<char>(value >> 8));
    out.push_back(static_cast<char>(value & 0xFF));
  } else {
    out.push_back(static_cast<char>(type | 26));
    for (int i = 3; i >= 0; --i) {
      out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
    }
  }
  return out;
}
std::string Text(absl::string_view s) { return absl::StrCat(Head(3, s.size()), s); }
std::string Bytes(absl::string_view s) { return absl::StrCat(Head(2, s.size()), s); }
std::string Uint32(uint32_t value) {  // Always 5 bytes.
  std::string out(1, static_cast<char>(0x1A));
  for (int i = 3; i >= 0; --i) {
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
  }
  return out;
}

// --- JUMBF.
std::string Box(absl::string_view type, absl::string_view payload) {
  const uint32_t length = static_cast<uint32_t>(8 + payload.size());
  std::string out;
  for (int i = 3; i >= 0; --i) {
    out.push_back(static_cast<char>((length >> (8 * i)) & 0xFF));
  }
  return absl::StrCat(out, type, payload);
}
std::string Superbox(absl::string_view uuid_tag, absl::string_view label,
                     absl::string_view contents) {
  const std::string description =
      Box("jumd",
          absl::StrCat(C2paUuid(uuid_tag), std::string(1, '\x03'), label, std::string(1, '\0')));
  return Box("jumb", absl::StrCat(description, contents));
}

std::string Sha256(absl::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return std::string(reinterpret_cast<char*>(digest), sizeof(digest));
}

// The ES256 signature of `message` as COSE's r||s.
std::string SignEs256(EVP_PKEY* key, absl::string_view message) {
  EVP_MD_CTX* context = EVP_MD_CTX_new();
  Check(context != nullptr && EVP_DigestSignInit(context, nullptr, EVP_sha256(), nullptr, key) == 1,
        "sign init");
  size_t length = 0;
  Check(EVP_DigestSign(context, nullptr, &length,
                       reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1,
        "sign size");
  std::string der(length, '\0');
  Check(EVP_DigestSign(context, reinterpret_cast<unsigned char*>(der.data()), &length,
                       reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1,
        "sign");
  EVP_MD_CTX_free(context);
  const unsigned char* cursor = reinterpret_cast<const unsigned char*>(der.data());
  ECDSA_SIG* signature = d2i_ECDSA_SIG(nullptr, &cursor, static_cast<long>(length));
  Check(signature != nullptr, "parse signature");
  std::string raw(64, '\0');
  BN_bn2binpad(ECDSA_SIG_get0_r(signature), reinterpret_cast<unsigned char*>(raw.data()), 32);
  BN_bn2binpad(ECDSA_SIG_get0_s(signature), reinterpret_cast<unsigned char*>(raw.data()) + 32, 32);
  ECDSA_SIG_free(signature);
  return raw;
}

int FixedTime(TS_RESP_CTX*, void* data, long* seconds, long* microseconds) {
  *seconds = static_cast<long>(absl::ToTimeT(*static_cast<absl::Time*>(data)));
  *microseconds = 0;
  return 1;
}

// A DER TimeStampResp granting a SHA-256 time-stamp of `data` by `authority` at `at`.
std::string MakeTimestamp(const C2paTestCredential& authority, absl::Time at,
                          absl::string_view data) {
  const std::string digest = Sha256(data);
  TS_REQ* request = TS_REQ_new();
  TS_MSG_IMPRINT* imprint = TS_MSG_IMPRINT_new();
  X509_ALGOR* algorithm = X509_ALGOR_new();
  Check(request != nullptr && imprint != nullptr && algorithm != nullptr, "ts request");
  X509_ALGOR_set0(algorithm, OBJ_nid2obj(NID_sha256), V_ASN1_NULL, nullptr);
  TS_MSG_IMPRINT_set_algo(imprint, algorithm);
  TS_MSG_IMPRINT_set_msg(imprint,
                         reinterpret_cast<unsigned char*>(const_cast<char*>(digest.data())),
                         static_cast<int>(digest.size()));
  TS_REQ_set_version(request, 1);
  TS_REQ_set_msg_imprint(request, imprint);
  TS_REQ_set_cert_req(request, 1);
  BIO* request_bio = BIO_new(BIO_s_mem());
  Check(request_bio != nullptr && i2d_TS_REQ_bio(request_bio, request) == 1, "ts request der");

  const auto* cursor = reinterpret_cast<const unsigned char*>(authority.certificate_der.data());
  X509* certificate =
      d2i_X509(nullptr, &cursor, static_cast<long>(authority.certificate_der.size()));
  TS_RESP_CTX* context = TS_RESP_CTX_new();
  ASN1_OBJECT* policy = OBJ_txt2obj("1.3.6.1.4.1.99999.19", 1);
  Check(certificate != nullptr && context != nullptr && policy != nullptr, "tsa");
  Check(TS_RESP_CTX_set_signer_cert(context, certificate) == 1, "tsa certificate");
  Check(TS_RESP_CTX_set_signer_key(context, authority.key.get()) == 1, "tsa key");
  Check(TS_RESP_CTX_set_def_policy(context, policy) == 1, "tsa policy");
  Check(TS_RESP_CTX_add_md(context, EVP_sha256()) == 1, "tsa digest");
  absl::Time time = at;
  TS_RESP_CTX_set_time_cb(context, FixedTime, &time);
  TS_RESP* response = TS_RESP_create_response(context, request_bio);
  Check(response != nullptr, "ts response");
  unsigned char* der = nullptr;
  const int length = i2d_TS_RESP(response, &der);
  Check(length > 0, "ts response der");
  std::string out(reinterpret_cast<char*>(der), static_cast<size_t>(length));
  OPENSSL_free(der);
  TS_RESP_free(response);
  TS_RESP_CTX_free(context);
  ASN1_OBJECT_free(policy);
  X509_free(certificate);
  BIO_free(request_bio);
  TS_MSG_IMPRINT_free(imprint);  // TS_REQ_set_msg_imprint kept a copy
  X509_ALGOR_free(algorithm);     // TS_MSG_IMPRINT_set_algo kept a copy
  TS_REQ_free(request);
  return out;
}

// The manifest store for an asset whose hashed bytes are `data_hash`, with the exclusion
// (`start`, `length`).
std::string BuildStore(const C2paTestCredential& credential, const C2paTestManifest& manifest,
                       MediaType type, const std::string& data_hash, uint32_t start,
                       uint32_t length) {
  struct Assertion {
    std::string label;
    std::string box;
  };
  std::vector<Assertion> assertions;
  if (!manifest.digital_source_type.empty()) {
    const std::string actions = absl::StrCat(
        Head(5, 1), Text("actions"), Head(4, 1), Head(5, 2), Text("action"), Text("c2pa.created"),
        Text("digitalSourceType"), Text(manifest.digital_source_type));
    assertions.push_back(
        {"c2pa.actions.v2", Superbox("cbor", "c2pa.actions.v2", Box("cbor", actions))});
  }
  const std::string hash_data = absl::StrCat(
      Head(5, 4), Text("exclusions"), Head(4, 1), Head(5, 2), Text("start"), Uint32(start),
      Text("length"), Uint32(length), Text("name"), Text("jumbf manifest"), Text("alg"),
      Text("sha256"), Text("hash"), Bytes(data_hash));
  assertions.push_back(
      {"c2pa.hash.data", Superbox("cbor", "c2pa.hash.data", Box("cbor", hash_data))});

  std::string store_contents;
  std::string references = Head(4, assertions.size());
  for (const Assertion& assertion : assertions) {
    store_contents += assertion.box;
    // The hashed URI covers the assertion's superbox without its 8-byte header.
    references += absl::StrCat(Head(5, 2), Text("url"),
                               Text(absl::StrCat("self#jumbf=c2pa.assertions/", assertion.label)),
                               Text("hash"), Bytes(Sha256(assertion.box.substr(8))));
  }
  const std::string claim = absl::StrCat(
      Head(5, 6), Text("claim_generator"), Text(manifest.claim_generator), Text("signature"),
      Text("self#jumbf=c2pa.signature"), Text("assertions"), references, Text("alg"),
      Text("sha256"), Text("dc:format"), Text(verifier::c2pa::MediaTypeName(type)),
      Text("instanceID"), Text("xmp:iid:portcullis-test"));

  const std::string protected_header =
      absl::StrCat(Head(5, 2), Head(0, 1), Head(1, 6) /* alg: -7, ES256 */, Head(0, 33), Head(4, 1),
                   Bytes(credential.certificate_der));
  const std::string signature =
      SignEs256(credential.key.get(), verifier::c2pa::CoseSigStructure(protected_header, claim));
  std::string unprotected = Head(5, 0);
  if (manifest.timestamp_authority != nullptr) {
    verifier::c2pa::CoseSign1 sign1;
    sign1.protected_header = protected_header;
    sign1.signature = signature;
    const std::string token = MakeTimestamp(*manifest.timestamp_authority, manifest.timestamp_time,
                                            verifier::c2pa::CoseTimestampedBytes(sign1, 2, claim));
    unprotected = absl::StrCat(Head(5, 1), Text("sigTst2"), Head(5, 1), Text("tstTokens"),
                               Head(4, 1), Head(5, 1), Text("val"), Bytes(token));
  }
  const std::string cose = absl::StrCat(std::string(1, '\xD2'), Head(4, 4), Bytes(protected_header),
                                        unprotected, std::string(1, '\xF6'), Bytes(signature));

  const std::string manifest_box =
      Superbox("c2ma", "urn:uuid:00000000-0000-4000-8000-000000000019",
               absl::StrCat(Superbox("c2as", "c2pa.assertions", store_contents),
                            Superbox("c2cl", "c2pa.claim", Box("cbor", claim)),
                            Superbox("c2cs", "c2pa.signature", Box("cbor", cose))));
  return Superbox("c2pa", "c2pa", manifest_box);
}

constexpr size_t kMaxApp11BoxData = 65535 - 2 - 8;  // Segment length field and "JP" En Z.

std::string JpegSegments(absl::string_view jumbf) {
  std::string out;
  uint32_t sequence = 1;
  size_t position = 0;
  while (position < jumbf.size()) {
    std::string data;
    if (sequence == 1) {
      data = std::string(jumbf.substr(0, kMaxApp11BoxData));
      position = data.size();
    } else {
      // Continuations repeat the box header (LBox, TBox).
      const size_t room = kMaxApp11BoxData - 8;
      data = absl::StrCat(jumbf.substr(0, 8), jumbf.substr(position, room));
      position += std::min(room, jumbf.size() - position);
    }
    const size_t length = 2 + 8 + data.size();
    out += absl::StrCat(
        absl::string_view("\xFF\xEB", 2), std::string(1, static_cast<char>(length >> 8)),
        std::string(1, static_cast<char>(length & 0xFF)), "JP", absl::string_view("\x00\x01", 2),
        std::string(1, static_cast<char>(sequence >> 24)),
        std::string(1, static_cast<char>((sequence >> 16) & 0xFF)),
        std::string(1, static_cast<char>((sequence >> 8) & 0xFF)),
        std::string(1, static_cast<char>(sequence & 0xFF)), data);
    ++sequence;
  }
  return out;
}

uint32_t Crc32(absl::string_view data) {
  uint32_t crc = 0xFFFFFFFFu;
  for (const char c : data) {
    crc ^= static_cast<uint8_t>(c);
    for (int k = 0; k < 8; ++k) {
      crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
  }
  return crc ^ 0xFFFFFFFFu;
}

std::string BigEndian32(uint32_t value) {
  std::string out;
  for (int i = 3; i >= 0; --i) {
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
  }
  return out;
}

std::string PngChunk(absl::string_view type, absl::string_view data) {
  const std::string typed = absl::StrCat(type, data);
  return absl::StrCat(BigEndian32(static_cast<uint32_t>(data.size())), typed,
                      BigEndian32(Crc32(typed)));
}

constexpr size_t kPngIhdrEnd = 8 + 12 + 13;

}  // namespace

C2paTestCredential MakeC2paTestCredential(const std::string& common_name, absl::Time not_before,
                                          absl::Time not_after, bool time_stamping) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  Check(key != nullptr, "key");
  X509* certificate = X509_new();
  Check(certificate != nullptr, "x509");
  X509_set_version(certificate, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(certificate), 19);
  ASN1_TIME_set(X509_getm_notBefore(certificate), absl::ToTimeT(not_before));
  ASN1_TIME_set(X509_getm_notAfter(certificate), absl::ToTimeT(not_after));
  X509_NAME* name = X509_get_subject_name(certificate);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  X509_set_issuer_name(certificate, name);
  X509_set_pubkey(certificate, key);
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, certificate, certificate, nullptr, nullptr, 0);
  for (const auto& [nid, value] : std::vector<std::pair<int, const char*>>{
           {NID_basic_constraints, "critical,CA:FALSE"},
           {NID_key_usage, "critical,digitalSignature"},
           {NID_ext_key_usage, time_stamping ? "critical,timeStamping" : "emailProtection"}}) {
    X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value);
    Check(extension != nullptr && X509_add_ext(certificate, extension, -1) == 1, "extension");
    X509_EXTENSION_free(extension);
  }
  Check(X509_sign(certificate, key, EVP_sha256()) > 0, "self-sign");

  C2paTestCredential credential;
  credential.key = std::shared_ptr<EVP_PKEY>(key, EVP_PKEY_free);
  unsigned char* der = nullptr;
  const int der_length = i2d_X509(certificate, &der);
  Check(der_length > 0, "der");
  credential.certificate_der = std::string(reinterpret_cast<char*>(der), der_length);
  OPENSSL_free(der);
  BIO* bio = BIO_new(BIO_s_mem());
  Check(bio != nullptr && PEM_write_bio_X509(bio, certificate) == 1, "pem");
  char* pem = nullptr;
  const long pem_length = BIO_get_mem_data(bio, &pem);
  credential.certificate_pem = std::string(pem, static_cast<size_t>(pem_length));
  BIO_free(bio);
  X509_free(certificate);
  return credential;
}

std::string SignC2paTestAsset(absl::string_view plain, MediaType type,
                              const C2paTestCredential& credential,
                              const C2paTestManifest& manifest) {
  // Everything but the inserted bytes is hashed: the hash of the plain file. The store's size
  // does not depend on the exclusion's values (fixed-width integers), so measure, then build.
  const std::string data_hash = Sha256(plain);
  const size_t start = type == MediaType::kJpeg ? 2 : kPngIhdrEnd;
  const auto wrap = [type](const std::string& store) {
    return type == MediaType::kJpeg ? JpegSegments(store) : PngChunk("caBX", store);
  };
  size_t inserted = wrap(BuildStore(credential, manifest, type, data_hash, 0, 0)).size();
  std::string container;
  // A time-stamp's DER signature varies in length with what it signs: build until the exclusion
  // names exactly the bytes inserted.
  for (int attempt = 0; attempt < 16; ++attempt) {
    container = wrap(BuildStore(credential, manifest, type, data_hash, static_cast<uint32_t>(start),
                                static_cast<uint32_t>(inserted)));
    if (container.size() == inserted) {
      break;
    }
    inserted = container.size();
  }
  return absl::StrCat(plain.substr(0, start), container, plain.substr(start));
}

std::string PlainTestJpeg(size_t padding_bytes) {
  // SOI, a quantization table, SOF9 (1x1, one component), arithmetic conditioning, SOS, 3 bytes
  // of entropy-coded data, EOI: one gray pixel.
  std::string out("\xFF\xD8\xFF\xDB\x00\x43\x00", 7);
  out += std::string(64, '\x01');
  std::string padding;
  uint32_t state = 19;
  while (padding_bytes > 0) {
    const size_t chunk = std::min<size_t>(padding_bytes, 65533);
    std::string comment;
    for (size_t i = 0; i < chunk; ++i) {
      state = state * 1103515245u + 12345u;
      comment.push_back(static_cast<char>('a' + (state >> 16) % 26));
    }
    const size_t length = chunk + 2;
    out += absl::StrCat(absl::string_view("\xFF\xFE", 2),
                        std::string(1, static_cast<char>(length >> 8)),
                        std::string(1, static_cast<char>(length & 0xFF)), comment);
    padding_bytes -= chunk;
  }
  out += std::string(
      "\xFF\xC9\x00\x0B\x08\x00\x01\x00\x01\x01\x01\x11\x00\xFF\xCC\x00\x06\x00\x10\x10\x05"
      "\xFF\xDA\x00\x08\x01\x01\x00\x00\x3F\x00\xD2\xCF\x20\xFF\xD9",
      36);
  return out;
}

std::string PlainTestPng() {
  const std::string ihdr("\x00\x00\x00\x01\x00\x00\x00\x01\x08\x00\x00\x00\x00", 13);
  // zlib, one stored block: filter byte 0 and one black pixel; Adler-32 of two zero bytes.
  const std::string idat("\x78\x01\x01\x02\x00\xFD\xFF\x00\x00\x00\x02\x00\x01", 13);
  return absl::StrCat(absl::string_view("\x89PNG\r\n\x1a\n", 8), PngChunk("IHDR", ihdr),
                      PngChunk("IDAT", idat), PngChunk("IEND", ""));
}

size_t JpegScanOffset(absl::string_view jpeg) {
  return jpeg.rfind(absl::string_view("\xFF\xDA", 2));
}

}  // namespace portcullis::testing
