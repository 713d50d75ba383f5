#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/support/channel_arguments.h"

// Optional (mutual) TLS between the clients of the verifier (gateway, CLI) and the verifier.
// Certificates and keys are PEM files watched by gRPC's FileWatcherCertificateProvider: a renewed
// pair (cert-manager, a Secret update) is picked up by new connections within the reload interval,
// without a restart. Nothing here is TLS-specific to one binary; each names its own flags.
namespace portcullis::grpc_tls {

// Largest certificate, chain or key file read.
inline constexpr size_t kMaxPemFileBytes = 1024 * 1024;

// How a binary spells its TLS flags, so that every startup error names the flag to fix.
struct ServerTlsFlagNames {
  std::string cert_file = "--tls_cert_file (TLS_CERT_FILE)";
  std::string key_file = "--tls_key_file (TLS_KEY_FILE)";
  std::string client_ca_file = "--tls_client_ca_file (TLS_CLIENT_CA_FILE)";
  std::string reload_interval = "--tls_reload_interval (TLS_RELOAD_INTERVAL)";
};

// The TLS of a gRPC server. No files: plaintext. cert_file and key_file (both or neither): TLS.
// client_ca_file as well: every client must present a certificate issued by one of its CAs
// (mutual TLS); a client without one, or with another CA's, cannot connect.
struct ServerTlsOptions {
  std::string cert_file;       // PEM certificate chain, leaf first.
  std::string key_file;        // PEM private key of the leaf.
  std::string client_ca_file;  // PEM CA certificates of the clients.
  // How often the files are read again (whole seconds, at least 1 s).
  absl::Duration reload_interval = absl::Seconds(60);
  ServerTlsFlagNames flag_names;

  bool enabled() const { return !cert_file.empty() || !key_file.empty(); }
};

// Checks the combination (no file reading): InvalidArgument naming the flag when only one of
// cert and key is given, a client CA without them, or a reload interval under 1 s.
absl::Status CheckServerTlsOptions(const ServerTlsOptions& options);

// The server's credentials: insecure without files; otherwise TLS over a file watcher, after
// checking once that every file is readable and holds what it should (certificates, a key that
// matches the certificate). InvalidArgument naming the flag otherwise.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerTlsOptions& options);

struct ClientTlsFlagNames {
  std::string ca_file = "--verifier_tls_ca_file";
  std::string cert_file = "--verifier_tls_cert_file";
  std::string key_file = "--verifier_tls_key_file";
  std::string server_name = "--verifier_tls_server_name";
  std::string reload_interval = "--verifier_tls_reload_interval";
};

// The TLS of a client. No option: plaintext. ca_file: TLS, the server's certificate must chain
// to one of its CAs and carry the server name (server_name, else the target's host) in its SAN.
// cert_file and key_file (both or neither): the client certificate presented for mutual TLS.
struct ClientTlsOptions {
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  // The DNS name (or IP) the server's certificate must be issued for, when the target is an
  // address or a name the certificate does not carry (e.g. a headless Service's pod IPs).
  std::string server_name;
  absl::Duration reload_interval = absl::Seconds(60);
  ClientTlsFlagNames flag_names;

  bool enabled() const {
    return !ca_file.empty() || !cert_file.empty() || !key_file.empty() || !server_name.empty();
  }
};

// Checks the combination (no file reading): InvalidArgument naming the flag when a client
// certificate, key or server name comes without a CA file, only one of cert and key is given, or
// the reload interval is under 1 s.
absl::Status CheckClientTlsOptions(const ClientTlsOptions& options);

// What a client channel needs besides its target: the credentials and the channel arguments that
// go with them (the expected server name). Pass both to grpc::CreateCustomChannel or
// grpc_client::CreateAuthorizedChannel.
struct ChannelSecurity {
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  // Empty: the target's host is checked against the certificate.
  std::string server_name;
  bool tls = false;

  // Sets the expected server name on `args` (no-op when empty).
  void ApplyTo(grpc::ChannelArguments& args) const;
};

// Insecure credentials without options; otherwise TLS over a file watcher, after checking once
// that every file is readable and holds what it should. InvalidArgument naming the flag otherwise.
absl::StatusOr<ChannelSecurity> MakeChannelSecurity(const ClientTlsOptions& options);

// Checks one PEM file at startup, naming `flag` in the error: readable, at most kMaxPemFileBytes,
// and holding at least one certificate. Exposed for tests and tools.
absl::Status CheckCertificateFile(const std::string& path, const std::string& flag);

}  // namespace portcullis::grpc_tls
