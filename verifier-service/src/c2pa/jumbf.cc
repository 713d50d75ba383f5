#include "verifier-service/src/c2pa/jumbf.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"

namespace portcullis::verifier::c2pa {
namespace {

constexpr size_t kDescriptionUuidBytes = 16;
constexpr uint8_t kToggleLabel = 0x02;

class Parser {
 public:
  Parser(absl::string_view all, const C2paLimits& limits) : all_(all), limits_(limits) {}

  // One box at the start of `span`; its length is consumed from `span`.
  absl::StatusOr<JumbfBox> ParseBox(absl::string_view& span, size_t depth) {
    const size_t offset = static_cast<size_t>(span.data() - all_.data());
    if (++boxes_ > limits_.max_jumbf_boxes) {
      return absl::InvalidArgumentError(
          absl::StrCat("JUMBF: more than ", limits_.max_jumbf_boxes, " boxes"));
    }
    if (span.size() < 8) {
      return absl::InvalidArgumentError(absl::StrCat("JUMBF: truncated box header at ", offset));
    }
    uint64_t length = ReadBigEndian(span.substr(0, 4));
    size_t header = 8;
    if (length == 1) {
      if (span.size() < 16) {
        return absl::InvalidArgumentError(absl::StrCat("JUMBF: truncated XLBox at ", offset));
      }
      length = ReadBigEndian(span.substr(8, 8));
      header = 16;
    } else if (length == 0) {
      length = span.size();
    }
    if (length < header || length > span.size()) {
      return absl::InvalidArgumentError(absl::StrCat("JUMBF: box at ", offset, " claims ", length,
                                                     " bytes, ", span.size(), " remain"));
    }
    JumbfBox box;
    box.type = std::string(span.substr(4, 4));
    box.whole = span.substr(0, static_cast<size_t>(length));
    box.payload = box.whole.substr(header);
    span.remove_prefix(static_cast<size_t>(length));
    if (box.is_superbox()) {
      if (depth >= limits_.max_jumbf_depth) {
        return absl::InvalidArgumentError(
            absl::StrCat("JUMBF: superboxes nested deeper than ", limits_.max_jumbf_depth));
      }
      RETURN_IF_ERROR(ParseSuperboxContents(box, depth + 1));
    }
    return box;
  }

 private:
  absl::Status ParseSuperboxContents(JumbfBox& box, size_t depth) {
    absl::string_view contents = box.payload;
    ASSIGN_OR_RETURN(JumbfBox description, ParseBox(contents, depth));
    if (description.type != "jumd") {
      return absl::InvalidArgumentError("JUMBF: a superbox does not start with its description");
    }
    RETURN_IF_ERROR(ParseDescription(description.payload, box));
    while (!contents.empty()) {
      ASSIGN_OR_RETURN(JumbfBox child, ParseBox(contents, depth));
      box.children.push_back(std::move(child));
    }
    return absl::OkStatus();
  }

  absl::Status ParseDescription(absl::string_view description, JumbfBox& box) {
    if (description.size() < kDescriptionUuidBytes + 1) {
      return absl::InvalidArgumentError("JUMBF: description box too short");
    }
    box.uuid = std::string(description.substr(0, kDescriptionUuidBytes));
    const uint8_t toggles = static_cast<uint8_t>(description[kDescriptionUuidBytes]);
    if ((toggles & kToggleLabel) != 0) {
      const absl::string_view rest = description.substr(kDescriptionUuidBytes + 1);
      const size_t nul = rest.find('\0');
      if (nul == absl::string_view::npos) {
        return absl::InvalidArgumentError("JUMBF: description label without its NUL");
      }
      if (nul > limits_.max_label_bytes) {
        return absl::InvalidArgumentError(
            absl::StrCat("JUMBF: label over ", limits_.max_label_bytes, " bytes"));
      }
      box.label = std::string(rest.substr(0, nul));
    }
    return absl::OkStatus();
  }

  absl::string_view all_;
  const C2paLimits& limits_;
  size_t boxes_ = 0;
};

}  // namespace

uint64_t ReadBigEndian(absl::string_view bytes) {
  uint64_t value = 0;
  for (const char c : bytes) {
    value = (value << 8) | static_cast<uint8_t>(c);
  }
  return value;
}


const JumbfBox* JumbfBox::FindChild(absl::string_view wanted) const {
  for (const JumbfBox& child : children) {
    if (child.is_superbox() && child.label == wanted) {
      return &child;
    }
  }
  return nullptr;
}

const JumbfBox* JumbfBox::FindContent(absl::string_view wanted) const {
  for (const JumbfBox& child : children) {
    if (child.type == wanted) {
      return &child;
    }
  }
  return nullptr;
}

std::string C2paUuid(absl::string_view four_chars) {
  static constexpr char kSuffix[] = "\x00\x11\x00\x10\x80\x00\x00\xAA\x00\x38\x9B\x71";
  return absl::StrCat(four_chars, absl::string_view(kSuffix, sizeof(kSuffix) - 1));
}

absl::StatusOr<JumbfBox> ParseJumbfSuperbox(absl::string_view bytes, const C2paLimits& limits) {
  if (bytes.size() > limits.max_manifest_store_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("JUMBF: manifest store over ", limits.max_manifest_store_bytes, " bytes"));
  }
  Parser parser(bytes, limits);
  absl::string_view span = bytes;
  ASSIGN_OR_RETURN(JumbfBox box, parser.ParseBox(span, 0));
  if (!box.is_superbox()) {
    return absl::InvalidArgumentError(
        absl::StrCat("JUMBF: the manifest store is a \"", box.type, "\" box, not a superbox"));
  }
  if (!span.empty()) {
    return absl::InvalidArgumentError("JUMBF: bytes after the manifest store");
  }
  return box;
}

}  // namespace portcullis::verifier::c2pa
