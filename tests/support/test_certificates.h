#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace portcullis::testing {

// Certificates for TLS tests, made with the `openssl` command in a directory the test owns:
// CAs and the certificates they issue (EC P-256 keys, valid for two days). Every file is PEM.
class TestPki {
 public:
  // Uses `directory` (created if missing) for every file.
  static absl::StatusOr<TestPki> Create(const std::string& directory);

  // A self-signed CA: <name>.crt and <name>.key.
  absl::Status MakeCa(const std::string& name);

  // A certificate issued by CA `ca` with `serial` and the subjectAltName entries `sans` (e.g.
  // "DNS:verifier.test", "IP:127.0.0.1"), usable for server and client authentication:
  // <name>.crt and <name>.key.
  absl::Status Issue(const std::string& ca, const std::string& name, int serial,
                     const std::vector<std::string>& sans);

  // <directory>/<name>.crt, <directory>/<name>.key.
  std::string Cert(const std::string& name) const { return directory_ + "/" + name + ".crt"; }
  std::string Key(const std::string& name) const { return directory_ + "/" + name + ".key"; }
  const std::string& directory() const { return directory_; }

 private:
  explicit TestPki(std::string directory) : directory_(std::move(directory)) {}

  std::string directory_;
};

// The serial (upper-case hex, as `openssl x509 -serial` prints it) of the certificate a TLS server
// at 127.0.0.1:`port` presents, asking for `server_name` and presenting the client certificate
// `client_cert`/`client_key` when given. Error when the handshake fails.
absl::StatusOr<std::string> PresentedSerial(int port, const std::string& server_name,
                                            const std::string& ca_file,
                                            const std::string& client_cert = "",
                                            const std::string& client_key = "");

// The serial of the certificate in a PEM file, as above.
absl::StatusOr<std::string> FileSerial(const std::string& cert_file);

}  // namespace portcullis::testing
