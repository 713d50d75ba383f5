#include "verifier-service/src/store/target_rule.h"

namespace portcullis::verifier::store {

absl::string_view TargetKindName(TargetKind kind) {
  return kind == TargetKind::kPrefix ? "PREFIX" : "EXACT";
}

}  // namespace portcullis::verifier::store
