#pragma once

// The OpenSSL objects the C2PA validator holds, each owned by a std::unique_ptr that frees it.

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pkcs7.h>
#include <openssl/ts.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <memory>

namespace portcullis::verifier::c2pa {

// Frees with `Free` (X509_free, BIO_free, ...).
template <auto Free>
struct OpenSslFree {
  template <typename T>
  void operator()(T* object) const {
    Free(object);
  }
};

inline void FreeX509Stack(STACK_OF(X509) * stack) { sk_X509_pop_free(stack, X509_free); }

using X509Ptr = std::unique_ptr<X509, OpenSslFree<X509_free>>;
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, OpenSslFree<EVP_PKEY_free>>;
using EvpMdCtxPtr = std::unique_ptr<EVP_MD_CTX, OpenSslFree<EVP_MD_CTX_free>>;
using EcdsaSigPtr = std::unique_ptr<ECDSA_SIG, OpenSslFree<ECDSA_SIG_free>>;
using BnPtr = std::unique_ptr<BIGNUM, OpenSslFree<BN_free>>;
using BioPtr = std::unique_ptr<BIO, OpenSslFree<BIO_free>>;
using StorePtr = std::unique_ptr<X509_STORE, OpenSslFree<X509_STORE_free>>;
using StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, OpenSslFree<X509_STORE_CTX_free>>;
using StackPtr = std::unique_ptr<STACK_OF(X509), OpenSslFree<FreeX509Stack>>;
using TsRespPtr = std::unique_ptr<TS_RESP, OpenSslFree<TS_RESP_free>>;
using Pkcs7Ptr = std::unique_ptr<PKCS7, OpenSslFree<PKCS7_free>>;
using TsVerifyCtxPtr = std::unique_ptr<TS_VERIFY_CTX, OpenSslFree<TS_VERIFY_CTX_free>>;
using TsTstInfoPtr = std::unique_ptr<TS_TST_INFO, OpenSslFree<TS_TST_INFO_free>>;

}  // namespace portcullis::verifier::c2pa
