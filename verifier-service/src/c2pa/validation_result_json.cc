#include "verifier-service/src/c2pa/validation_result_json.h"

#include <string>

#include "boost/json/array.hpp"
#include "boost/json/object.hpp"

namespace portcullis::verifier::c2pa {

boost::json::value ValidationResultToJson(const ValidationResult& result) {
  boost::json::array statuses;
  for (const ValidationStatus& status : result.statuses) {
    statuses.push_back(boost::json::object{{"code", status.code},
                                           {"url", status.url},
                                           {"success", status.success},
                                           {"explanation", status.explanation}});
  }
  return boost::json::object{
      {"media_type", std::string(MediaTypeName(result.media_type))},
      {"verdict", std::string(VerdictName(result.verdict))},
      {"failure_code", result.failure_code},
      {"manifest_label", result.manifest_label},
      {"signer_subject", result.signer_subject},
      {"claim_generator", result.claim_generator},
      {"digital_source_type", result.digital_source_type},
      {"statuses", std::move(statuses)},
  };
}

}  // namespace portcullis::verifier::c2pa
