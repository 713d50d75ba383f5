#pragma once

// The shared Standard Webhooks vectors (the format of
// ../shared/testdata/standard-webhooks/vectors.json) run against standard_webhooks.h: the
// published v1 signatures reproduced, every verify vector accepted or refused as expected (with
// the reason for stale and future timestamps), the secret-parsing policy (strict padded base64,
// whsec_ prefix optional) and the derived v1a (Ed25519) vector. One runner for the unit test and
// for `portcullis conformance webhooks`.

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace portcullis::verifier::ingest {

// Called once per checked case: `ok`, and what was checked (with the reason when not ok).
using VectorCheck = std::function<void(bool ok, const std::string& what)>;

// Runs every case of `vectors_json`, calling `check` for each. kInvalidArgument when the file
// is not in the expected format (cases checked before the problem was found have been reported).
absl::Status RunWebhookVectors(absl::string_view vectors_json, const VectorCheck& check);

}  // namespace portcullis::verifier::ingest
