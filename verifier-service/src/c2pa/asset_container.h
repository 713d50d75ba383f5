#pragma once

// Where a C2PA manifest store sits inside an image file: JPEG carries it in APP11 segments
// (JPEG XT "JP" boxes, split across segments of one box instance and reassembled in packet
// sequence order), PNG in one `caBX` chunk. Pure logic over bytes.

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "verifier-service/src/c2pa/c2pa_limits.h"

namespace portcullis::verifier::c2pa {

enum class MediaType { kJpeg, kPng };

// "image/jpeg" / "image/png".
absl::string_view MediaTypeName(MediaType type);
// The media type of a content type ("image/jpeg", "image/png"); kInvalidArgument for others.
absl::StatusOr<MediaType> MediaTypeFromContentType(absl::string_view content_type);
// The media type by the file's signature; kInvalidArgument when it is neither.
absl::StatusOr<MediaType> SniffMediaType(absl::string_view asset);

// The reassembled JUMBF bytes of the file's C2PA manifest store; nullopt when the file carries
// none. kInvalidArgument when the file is not a well-formed `type` container as far as it must be
// read (segment or chunk lengths past the end, APP11 packets missing, duplicated or out of
// range, two manifest stores), or over `limits`.
absl::StatusOr<std::optional<std::string>> ExtractManifestStore(absl::string_view asset,
                                                                MediaType type,
                                                                const C2paLimits& limits);

}  // namespace portcullis::verifier::c2pa
