#pragma once

// JUMBF (ISO/IEC 19566-5) boxes as C2PA uses them: a box is LBox (4 bytes, big-endian), TBox
// (4 bytes), an optional XLBox (8 bytes, when LBox is 1) and its payload; LBox 0 runs to the end
// of the enclosing box. A superbox ("jumb") holds a description box ("jumd": a 16-byte type UUID,
// toggles, an optional NUL-terminated label, optional ID, signature and private box) followed by
// its content boxes.
//
// Pure logic over bytes. Every view in the result points into the caller's buffer, which must
// outlive it.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "verifier-service/src/c2pa/c2pa_limits.h"

namespace portcullis::verifier::c2pa {

// The four-character type of a box, e.g. "jumb", "jumd", "cbor".
struct JumbfBox {
  std::string type;
  absl::string_view whole;    // the box, header included
  absl::string_view payload;  // after LBox/TBox(/XLBox)
  // For a superbox ("jumb") only: from its description box, and its content boxes in order.
  std::string uuid;  // 16 raw bytes
  std::string label;
  std::vector<JumbfBox> children;

  bool is_superbox() const { return type == "jumb"; }
  // The first child superbox labelled `label`, or nullptr.
  const JumbfBox* FindChild(absl::string_view label) const;
  // The payload of the first content box of `type` (e.g. "cbor"), or nullptr.
  const JumbfBox* FindContent(absl::string_view type) const;
};

// The type UUIDs C2PA gives its superboxes: the 4 ASCII bytes + 0011-0010-8000-00AA00389B71.
std::string C2paUuid(absl::string_view four_chars);

// Parses `bytes` as exactly one JUMBF superbox (the C2PA manifest store). kInvalidArgument naming
// the offset for anything malformed: a length past its parent, a superbox without a leading
// description box, a label without its NUL, nesting deeper or more boxes than `limits` allow.
absl::StatusOr<JumbfBox> ParseJumbfSuperbox(absl::string_view bytes, const C2paLimits& limits);

// The unsigned big-endian integer `bytes` spell (at most 8 of them): box and segment lengths.
uint64_t ReadBigEndian(absl::string_view bytes);

}  // namespace portcullis::verifier::c2pa
