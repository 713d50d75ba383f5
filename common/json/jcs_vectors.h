#pragma once

// The shared RFC 8785 vectors (the format of ../shared/testdata/jcs/vectors.json) run against
// common/json: byte-exact canonical output and its SHA-256 for every file, ECMAScript number
// serialization for every IEEE-754 case, and the errata's refusals. One runner for the unit test
// and for `portcullis conformance jcs`.

#include <functional>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace portcullis::json {

// Called once per checked case: `ok`, and what was checked (with the difference when not ok).
using VectorCheck = std::function<void(bool ok, const std::string& what)>;

// Runs every case of `vectors_json`, calling `check` for each; `notes` gets informational lines
// (errata without an input case). kInvalidArgument when the file is not in the expected format
// (cases checked before the problem was found have been reported).
absl::Status RunJcsVectors(absl::string_view vectors_json, const VectorCheck& check,
                           std::ostream& notes);

}  // namespace portcullis::json
