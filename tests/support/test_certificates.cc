#include "tests/support/test_certificates.h"

#include <sys/stat.h>

#include <cerrno>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tests/support/child_process.h"

namespace portcullis::testing {
namespace {

constexpr char kOpenssl[] = "/usr/bin/openssl";
constexpr char kShell[] = "/bin/sh";

absl::Status Run(const std::vector<std::string>& args) {
  const CommandResult result = RunCommand(kOpenssl, args);
  if (result.exit_code != 0) {
    return absl::InternalError(
        absl::StrCat("openssl ", absl::StrJoin(args, " "), " failed: ", result.output));
  }
  return absl::OkStatus();
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    return absl::InternalError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

// The "serial=…" line of `openssl x509 -serial` output, without the prefix.
absl::StatusOr<std::string> ParseSerial(const CommandResult& result) {
  for (absl::string_view line : absl::StrSplit(result.output, '\n')) {
    if (absl::ConsumePrefix(&line, "serial=")) {
      return std::string(absl::StripAsciiWhitespace(line));
    }
  }
  return absl::UnavailableError(absl::StrCat("no certificate: ", result.output));
}

std::string ShellQuote(const std::string& text) {
  return absl::StrCat("'", absl::StrReplaceAll(text, {{"'", "'\\''"}}), "'");
}

}  // namespace

absl::StatusOr<TestPki> TestPki::Create(const std::string& directory) {
  if (::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::InternalError(absl::StrCat("cannot create ", directory));
  }
  return TestPki(directory);
}

absl::Status TestPki::MakeCa(const std::string& name) {
  const std::string config = directory_ + "/" + name + ".ca.cnf";
  if (absl::Status status = WriteFile(config,
                                      "[req]\n"
                                      "distinguished_name = dn\n"
                                      "prompt = no\n"
                                      "[dn]\n"
                                      "CN = " + name + "\n"
                                      "[ca]\n"
                                      "basicConstraints = critical, CA:TRUE\n"
                                      "keyUsage = critical, keyCertSign, cRLSign\n"
                                      "subjectKeyIdentifier = hash\n");
      !status.ok()) {
    return status;
  }
  return Run({"req", "-x509", "-config", config, "-extensions", "ca", "-newkey", "ec", "-pkeyopt",
              "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", Key(name), "-out", Cert(name),
              "-days", "2", "-set_serial", "1"});
}

absl::Status TestPki::Issue(const std::string& ca, const std::string& name, int serial,
                            const std::vector<std::string>& sans) {
  const std::string config = directory_ + "/" + name + ".cnf";
  const std::string csr = directory_ + "/" + name + ".csr";
  if (absl::Status status = WriteFile(
          config, absl::StrCat("[req]\n"
                               "distinguished_name = dn\n"
                               "prompt = no\n"
                               "[dn]\n"
                               "CN = ", name, "\n"
                               "[leaf]\n"
                               "basicConstraints = critical, CA:FALSE\n"
                               "keyUsage = critical, digitalSignature, keyEncipherment\n"
                               "extendedKeyUsage = serverAuth, clientAuth\n"
                               "subjectAltName = ", absl::StrJoin(sans, ", "), "\n"
                               "authorityKeyIdentifier = keyid\n"));
      !status.ok()) {
    return status;
  }
  if (absl::Status status =
          Run({"req", "-new", "-config", config, "-newkey", "ec", "-pkeyopt",
               "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", Key(name), "-out", csr});
      !status.ok()) {
    return status;
  }
  return Run({"x509", "-req", "-in", csr, "-CA", Cert(ca), "-CAkey", Key(ca), "-set_serial",
              std::to_string(serial), "-days", "2", "-extfile", config, "-extensions", "leaf",
              "-out", Cert(name)});
}

absl::StatusOr<std::string> PresentedSerial(int port, const std::string& server_name,
                                            const std::string& ca_file,
                                            const std::string& client_cert,
                                            const std::string& client_key) {
  std::string command = absl::StrCat(
      kOpenssl, " s_client -connect 127.0.0.1:", port, " -servername ", ShellQuote(server_name),
      " -verify_hostname ", ShellQuote(server_name), " -verify_return_error -alpn h2 -CAfile ",
      ShellQuote(ca_file));
  if (!client_cert.empty()) {
    absl::StrAppend(&command, " -cert ", ShellQuote(client_cert), " -key ",
                    ShellQuote(client_key));
  }
  absl::StrAppend(&command, " </dev/null 2>/dev/null | ", kOpenssl, " x509 -noout -serial");
  return ParseSerial(RunCommand(kShell, {"-c", command}));
}

absl::StatusOr<std::string> FileSerial(const std::string& cert_file) {
  return ParseSerial(RunCommand(kOpenssl, {"x509", "-in", cert_file, "-noout", "-serial"}));
}

}  // namespace portcullis::testing
