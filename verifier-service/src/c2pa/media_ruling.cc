#include "verifier-service/src/c2pa/media_ruling.h"

#include "absl/strings/str_cat.h"

namespace portcullis::verifier::c2pa {

MediaRuling RuleOnMedia(const std::vector<MediaElement>& media, const TrustAnchors& anchors,
                        absl::Time now, const MediaRulingOptions& options,
                        const C2paLimits& limits) {
  MediaRuling ruling;
  ruling.provenance_valid = !media.empty();
  for (const MediaElement& element : media) {
    ruling.results.push_back(ValidateAsset(element.data, element.type, anchors, now, limits));
    const ValidationResult& result = ruling.results.back();
    if (ruling.action != MediaRuling::Action::kNone) {
      continue;  // Ruled already; the rest is verified only to be kept with the item.
    }
    switch (result.verdict) {
      case Verdict::kMalformed:
        ruling.action = options.publisher_verified ? MediaRuling::Action::kQuarantine
                                                   : MediaRuling::Action::kDrop;
        ruling.reason = options.publisher_verified
                            ? kReasonMalformedManifest
                            : absl::StrCat(kReasonPrefix, result.failure_code);
        break;
      case Verdict::kInvalid:
        ruling.action = MediaRuling::Action::kDrop;
        ruling.reason = absl::StrCat(kReasonPrefix, result.failure_code);
        break;
      case Verdict::kNoManifest:
        ruling.provenance_valid = false;
        if (options.require_c2pa_for_media) {
          ruling.action = MediaRuling::Action::kDrop;
          ruling.reason = kReasonMissingManifest;
        }
        break;
      case Verdict::kValid:
        if (IsAiDigitalSourceType(result.digital_source_type)) {
          ruling.synthetic = true;
        }
        break;
    }
  }
  if (ruling.action != MediaRuling::Action::kNone) {
    ruling.provenance_valid = false;
    ruling.synthetic = false;
  }
  return ruling;
}

}  // namespace portcullis::verifier::c2pa
