#pragma once

#include <string>

// Environment defaults for flags: every flag of a service reads its default from an environment
// variable, so that Kubernetes manifests stay env-only. Used only where flags are defined (main).
namespace portcullis::config {

// The value of environment variable `name`, or `fallback` when it is unset.
std::string EnvOr(const char* name, const std::string& fallback);

}  // namespace portcullis::config
