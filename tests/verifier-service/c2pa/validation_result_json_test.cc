#include "verifier-service/src/c2pa/validation_result_json.h"

#include "boost/json/serialize.hpp"
#include "gtest/gtest.h"

namespace portcullis::verifier::c2pa {
namespace {

TEST(VerifierC2paJsonTest, WritesEveryField) {
  ValidationResult result;
  result.media_type = MediaType::kPng;
  result.verdict = Verdict::kInvalid;
  result.failure_code = "assertion.dataHash.mismatch";
  result.signer_subject = "CN=S";
  result.claim_generator = "gen/1";
  result.digital_source_type = "trainedAlgorithmicMedia";
  result.manifest_label = "urn:uuid:1";
  result.statuses.push_back({"claimSignature.validated", "self#jumbf=c2pa.signature", "", true});
  result.statuses.push_back({"assertion.dataHash.mismatch", "u", "differs", false});
  EXPECT_EQ(boost::json::serialize(ValidationResultToJson(result)),
            R"({"media_type":"image/png","verdict":"invalid",)"
            R"("failure_code":"assertion.dataHash.mismatch","manifest_label":"urn:uuid:1",)"
            R"("signer_subject":"CN=S","claim_generator":"gen/1",)"
            R"("digital_source_type":"trainedAlgorithmicMedia","statuses":[)"
            R"({"code":"claimSignature.validated","url":"self#jumbf=c2pa.signature",)"
            R"("success":true,"explanation":""},)"
            R"({"code":"assertion.dataHash.mismatch","url":"u","success":false,)"
            R"("explanation":"differs"}]})");
}

}  // namespace
}  // namespace portcullis::verifier::c2pa
