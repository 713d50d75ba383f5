#include "common/grpc/channel_credentials.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "grpc/grpc_security_constants.h"
#include "grpcpp/security/tls_certificate_verifier.h"
#include "grpcpp/security/tls_credentials_options.h"

namespace portcullis::grpc_tls {
namespace {

struct BioDeleter {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Deleter {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct PkeyDeleter {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;
using X509Ptr = std::unique_ptr<X509, X509Deleter>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyDeleter>;

absl::Status FlagError(const std::string& flag, const std::string& path, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(flag, ": ", path, ": ", what));
}

// The file's bytes, at most kMaxPemFileBytes.
absl::StatusOr<std::string> ReadPemFile(const std::string& path, const std::string& flag) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return FlagError(flag, path,
                     absl::StrCat("cannot read (", errno != 0 ? std::strerror(errno) : "error",
                                  ")"));
  }
  std::string bytes;
  bytes.resize(kMaxPemFileBytes + 1);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (in.bad()) {
    return FlagError(flag, path, "cannot read");
  }
  bytes.resize(static_cast<size_t>(in.gcount()));
  if (bytes.size() > kMaxPemFileBytes) {
    return FlagError(flag, path, absl::StrCat("larger than ", kMaxPemFileBytes, " bytes"));
  }
  return bytes;
}

BioPtr MemoryBio(const std::string& bytes) {
  return BioPtr(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())));
}

// The first certificate of a PEM file (the leaf of a chain); error when there is none.
absl::StatusOr<X509Ptr> FirstCertificate(const std::string& bytes, const std::string& flag,
                                         const std::string& path) {
  BioPtr bio = MemoryBio(bytes);
  X509Ptr cert(bio == nullptr ? nullptr : PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  if (cert == nullptr) {
    return FlagError(flag, path, "holds no PEM certificate");
  }
  return cert;
}

absl::StatusOr<PkeyPtr> PrivateKey(const std::string& bytes, const std::string& flag,
                                   const std::string& path) {
  BioPtr bio = MemoryBio(bytes);
  // An empty passphrase callback result: an encrypted key is refused instead of prompting.
  PkeyPtr key(bio == nullptr ? nullptr
                             : PEM_read_bio_PrivateKey(
                                   bio.get(), nullptr,
                                   [](char*, int, int, void*) -> int { return 0; }, nullptr));
  ERR_clear_error();
  if (key == nullptr) {
    return FlagError(flag, path, "holds no unencrypted PEM private key");
  }
  return key;
}

// A certificate file and its key: both readable, and the key is the certificate's.
absl::Status CheckKeyPair(const std::string& cert_path, const std::string& cert_flag,
                          const std::string& key_path, const std::string& key_flag) {
  absl::StatusOr<std::string> cert_bytes = ReadPemFile(cert_path, cert_flag);
  if (!cert_bytes.ok()) {
    return cert_bytes.status();
  }
  absl::StatusOr<X509Ptr> cert = FirstCertificate(*cert_bytes, cert_flag, cert_path);
  if (!cert.ok()) {
    return cert.status();
  }
  absl::StatusOr<std::string> key_bytes = ReadPemFile(key_path, key_flag);
  if (!key_bytes.ok()) {
    return key_bytes.status();
  }
  absl::StatusOr<PkeyPtr> key = PrivateKey(*key_bytes, key_flag, key_path);
  if (!key.ok()) {
    return key.status();
  }
  const int matches = X509_check_private_key(cert->get(), key->get());
  ERR_clear_error();
  if (matches != 1) {
    return FlagError(key_flag, key_path,
                     absl::StrCat("is not the private key of the certificate in ", cert_flag));
  }
  return absl::OkStatus();
}

absl::Status CheckReloadInterval(absl::Duration interval, const std::string& flag) {
  if (interval < absl::Seconds(1)) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": must be at least 1s"));
  }
  return absl::OkStatus();
}

unsigned int ReloadSeconds(absl::Duration interval) {
  return static_cast<unsigned int>(absl::ToInt64Seconds(absl::Ceil(interval, absl::Seconds(1))));
}

}  // namespace

absl::Status CheckCertificateFile(const std::string& path, const std::string& flag) {
  absl::StatusOr<std::string> bytes = ReadPemFile(path, flag);
  if (!bytes.ok()) {
    return bytes.status();
  }
  return FirstCertificate(*bytes, flag, path).status();
}

absl::Status CheckServerTlsOptions(const ServerTlsOptions& options) {
  const ServerTlsFlagNames& names = options.flag_names;
  if (options.cert_file.empty() != options.key_file.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        options.cert_file.empty() ? names.cert_file : names.key_file, " is required with ",
        options.cert_file.empty() ? names.key_file : names.cert_file));
  }
  if (!options.client_ca_file.empty() && !options.enabled()) {
    return absl::InvalidArgumentError(absl::StrCat(names.client_ca_file, " needs ",
                                                   names.cert_file, " and ", names.key_file));
  }
  return CheckReloadInterval(options.reload_interval, names.reload_interval);
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerTlsOptions& options) {
  if (absl::Status status = CheckServerTlsOptions(options); !status.ok()) {
    return status;
  }
  if (!options.enabled()) {
    return grpc::InsecureServerCredentials();
  }
  const ServerTlsFlagNames& names = options.flag_names;
  if (absl::Status status =
          CheckKeyPair(options.cert_file, names.cert_file, options.key_file, names.key_file);
      !status.ok()) {
    return status;
  }
  const bool mutual = !options.client_ca_file.empty();
  if (mutual) {
    if (absl::Status status = CheckCertificateFile(options.client_ca_file, names.client_ca_file);
        !status.ok()) {
      return status;
    }
  }
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      options.key_file, options.cert_file, options.client_ca_file,
      ReloadSeconds(options.reload_interval));
  grpc::experimental::TlsServerCredentialsOptions tls(provider);
  tls.watch_identity_key_cert_pairs();
  if (mutual) {
    tls.watch_root_certs();
    tls.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  } else {
    tls.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  }
  return grpc::experimental::TlsServerCredentials(tls);
}

absl::Status CheckClientTlsOptions(const ClientTlsOptions& options) {
  const ClientTlsFlagNames& names = options.flag_names;
  if (options.cert_file.empty() != options.key_file.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        options.cert_file.empty() ? names.cert_file : names.key_file, " is required with ",
        options.cert_file.empty() ? names.key_file : names.cert_file));
  }
  if (options.enabled() && options.ca_file.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        names.ca_file, " is required with ",
        !options.cert_file.empty() ? names.cert_file : names.server_name,
        " (the CA that issued the verifier's certificate)"));
  }
  return CheckReloadInterval(options.reload_interval, names.reload_interval);
}

void ChannelSecurity::ApplyTo(grpc::ChannelArguments& args) const {
  if (!server_name.empty()) {
    args.SetSslTargetNameOverride(server_name);
  }
}

absl::StatusOr<ChannelSecurity> MakeChannelSecurity(const ClientTlsOptions& options) {
  if (absl::Status status = CheckClientTlsOptions(options); !status.ok()) {
    return status;
  }
  ChannelSecurity security;
  if (!options.enabled()) {
    security.credentials = grpc::InsecureChannelCredentials();
    return security;
  }
  const ClientTlsFlagNames& names = options.flag_names;
  if (absl::Status status = CheckCertificateFile(options.ca_file, names.ca_file); !status.ok()) {
    return status;
  }
  const bool has_identity = !options.cert_file.empty();
  if (has_identity) {
    if (absl::Status status =
            CheckKeyPair(options.cert_file, names.cert_file, options.key_file, names.key_file);
        !status.ok()) {
      return status;
    }
  }
  const unsigned int seconds = ReloadSeconds(options.reload_interval);
  auto provider =
      has_identity ? std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
                         options.key_file, options.cert_file, options.ca_file, seconds)
                   : std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
                         options.ca_file, seconds);
  grpc::experimental::TlsChannelCredentialsOptions tls;
  tls.set_certificate_provider(provider);
  tls.watch_root_certs();
  if (has_identity) {
    tls.watch_identity_key_cert_pairs();
  }
  tls.set_verify_server_certs(true);
  // The chain is checked against the CA; this checks the name (server_name, else the target's
  // host) against the certificate's SAN.
  tls.set_certificate_verifier(
      std::make_shared<grpc::experimental::HostNameCertificateVerifier>());
  security.credentials = grpc::experimental::TlsCredentials(tls);
  security.server_name = options.server_name;
  security.tls = true;
  return security;
}

}  // namespace portcullis::grpc_tls
