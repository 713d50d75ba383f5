#pragma once

// A ValidationResult as JSON, for `portcullis c2pa verify` and for tests:
//   {"media_type": "image/jpeg", "verdict": "valid", "failure_code": "",
//    "manifest_label": "...", "signer_subject": "CN=...", "claim_generator": "...",
//    "digital_source_type": "...",
//    "statuses": [{"code": "claimSignature.validated", "url": "...", "success": true,
//                  "explanation": ""}, ...]}

#include "boost/json/value.hpp"
#include "verifier-service/src/c2pa/manifest_validator.h"

namespace portcullis::verifier::c2pa {

boost::json::value ValidationResultToJson(const ValidationResult& result);

}  // namespace portcullis::verifier::c2pa
