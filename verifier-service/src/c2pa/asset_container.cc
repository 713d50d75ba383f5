#include "verifier-service/src/c2pa/asset_container.h"

#include <cstdint>
#include <map>

#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"
#include "verifier-service/src/c2pa/jumbf.h"

namespace portcullis::verifier::c2pa {
namespace {

constexpr absl::string_view kPngSignature("\x89PNG\r\n\x1a\n", 8);
constexpr uint8_t kMarkerSos = 0xDA;
constexpr uint8_t kMarkerEoi = 0xD9;
constexpr uint8_t kMarkerApp11 = 0xEB;
// CI "JP", En (2), Z (4): the JPEG XT header of every APP11 JUMBF segment.
constexpr size_t kApp11HeaderBytes = 8;

// The 8- or 16-byte LBox/TBox(/XLBox) header at the start of a segment's box data.
absl::StatusOr<size_t> BoxHeaderBytes(absl::string_view box_data) {
  if (box_data.size() < 8) {
    return absl::InvalidArgumentError("JPEG: APP11 segment shorter than a box header");
  }
  if (ReadBigEndian(box_data.substr(0, 4)) == 1) {
    if (box_data.size() < 16) {
      return absl::InvalidArgumentError("JPEG: APP11 segment shorter than a box header");
    }
    return 16;
  }
  return 8;
}

bool IsC2paStore(absl::string_view jumbf) {
  // jumb header (8) + jumd header (8), then the description's type UUID.
  return jumbf.size() >= 32 && jumbf.substr(4, 4) == "jumb" && jumbf.substr(12, 4) == "jumd" &&
         jumbf.substr(16, 16) == C2paUuid("c2pa");
}

absl::StatusOr<std::optional<std::string>> ExtractFromJpeg(absl::string_view asset,
                                                           const C2paLimits& limits) {
  if (asset.size() < 2 || static_cast<uint8_t>(asset[0]) != 0xFF ||
      static_cast<uint8_t>(asset[1]) != 0xD8) {
    return absl::InvalidArgumentError("JPEG: no start-of-image marker");
  }
  // Box instance number -> packet sequence number -> the segment's box data.
  std::map<uint16_t, std::map<uint32_t, absl::string_view>> instances;
  size_t app11_segments = 0;
  size_t position = 2;
  for (size_t segments = 0;; ++segments) {
    if (segments > limits.max_jpeg_segments) {
      return absl::InvalidArgumentError(
          absl::StrCat("JPEG: more than ", limits.max_jpeg_segments, " segments"));
    }
    if (position + 2 > asset.size()) {
      return absl::InvalidArgumentError("JPEG: truncated before the image data");
    }
    if (static_cast<uint8_t>(asset[position]) != 0xFF) {
      return absl::InvalidArgumentError(absl::StrCat("JPEG: no marker at ", position));
    }
    const uint8_t marker = static_cast<uint8_t>(asset[position + 1]);
    if (marker == 0xFF) {  // Fill byte.
      ++position;
      continue;
    }
    if (marker == kMarkerSos || marker == kMarkerEoi) {
      break;  // C2PA data precedes the image data.
    }
    if ((marker >= 0xD0 && marker <= 0xD7) || marker == 0x01) {
      position += 2;  // No length.
      continue;
    }
    if (position + 4 > asset.size()) {
      return absl::InvalidArgumentError("JPEG: truncated segment length");
    }
    const size_t length = static_cast<size_t>(ReadBigEndian(asset.substr(position + 2, 2)));
    if (length < 2 || position + 2 + length > asset.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("JPEG: segment at ", position, " runs past the end of the file"));
    }
    const absl::string_view body = asset.substr(position + 4, length - 2);
    position += 2 + length;
    if (marker != kMarkerApp11 || body.size() < kApp11HeaderBytes || body.substr(0, 2) != "JP") {
      continue;
    }
    if (++app11_segments > limits.max_app11_segments) {
      return absl::InvalidArgumentError(
          absl::StrCat("JPEG: more than ", limits.max_app11_segments, " APP11 segments"));
    }
    const auto instance = static_cast<uint16_t>(ReadBigEndian(body.substr(2, 2)));
    const auto sequence = static_cast<uint32_t>(ReadBigEndian(body.substr(4, 4)));
    if (!instances[instance].emplace(sequence, body.substr(kApp11HeaderBytes)).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "JPEG: APP11 packet ", sequence, " of box instance ", instance, " appears twice"));
    }
  }

  std::optional<std::string> store;
  for (const auto& [instance, packets] : instances) {
    std::string jumbf;
    uint32_t expected = 1;
    for (const auto& [sequence, data] : packets) {
      if (sequence != expected) {
        return absl::InvalidArgumentError(
            absl::StrCat("JPEG: APP11 box instance ", instance, " is missing packet ", expected));
      }
      ++expected;
      if (sequence == 1) {
        absl::StrAppend(&jumbf, data);
      } else {
        // Every continuation repeats the box header; the content follows it.
        ASSIGN_OR_RETURN(const size_t header, BoxHeaderBytes(data));
        absl::StrAppend(&jumbf, data.substr(header));
      }
      if (jumbf.size() > limits.max_manifest_store_bytes) {
        return absl::InvalidArgumentError(
            absl::StrCat("JPEG: manifest store over ", limits.max_manifest_store_bytes, " bytes"));
      }
    }
    if (!IsC2paStore(jumbf)) {
      continue;  // Some other JUMBF payload.
    }
    if (store.has_value()) {
      return absl::InvalidArgumentError("JPEG: more than one C2PA manifest store");
    }
    store = std::move(jumbf);
  }
  return store;
}

absl::StatusOr<std::optional<std::string>> ExtractFromPng(absl::string_view asset,
                                                          const C2paLimits& limits) {
  if (asset.substr(0, kPngSignature.size()) != kPngSignature) {
    return absl::InvalidArgumentError("PNG: no PNG signature");
  }
  std::optional<std::string> store;
  size_t position = kPngSignature.size();
  for (size_t chunks = 0; position < asset.size(); ++chunks) {
    if (chunks >= limits.max_png_chunks) {
      return absl::InvalidArgumentError(
          absl::StrCat("PNG: more than ", limits.max_png_chunks, " chunks"));
    }
    if (asset.size() - position < 12) {
      return absl::InvalidArgumentError(absl::StrCat("PNG: truncated chunk at ", position));
    }
    const uint64_t length = ReadBigEndian(asset.substr(position, 4));
    const absl::string_view type = asset.substr(position + 4, 4);
    if (length > asset.size() - position - 12) {
      return absl::InvalidArgumentError(
          absl::StrCat("PNG: chunk at ", position, " runs past the end of the file"));
    }
    const absl::string_view data = asset.substr(position + 8, static_cast<size_t>(length));
    position += 12 + static_cast<size_t>(length);
    if (type == "caBX") {
      if (store.has_value()) {
        return absl::InvalidArgumentError("PNG: more than one caBX chunk");
      }
      if (data.size() > limits.max_manifest_store_bytes) {
        return absl::InvalidArgumentError(
            absl::StrCat("PNG: manifest store over ", limits.max_manifest_store_bytes, " bytes"));
      }
      store = std::string(data);
    }
    if (type == "IEND") {
      break;
    }
  }
  return store;
}

}  // namespace

absl::string_view MediaTypeName(MediaType type) {
  switch (type) {
    case MediaType::kJpeg:
      return "image/jpeg";
    case MediaType::kPng:
      return "image/png";
  }
  return "";
}

absl::StatusOr<MediaType> MediaTypeFromContentType(absl::string_view content_type) {
  if (content_type == "image/jpeg") {
    return MediaType::kJpeg;
  }
  if (content_type == "image/png") {
    return MediaType::kPng;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported media content type \"", content_type, "\""));
}

absl::StatusOr<MediaType> SniffMediaType(absl::string_view asset) {
  if (asset.size() >= 3 && asset.substr(0, 3) == absl::string_view("\xFF\xD8\xFF", 3)) {
    return MediaType::kJpeg;
  }
  if (asset.substr(0, kPngSignature.size()) == kPngSignature) {
    return MediaType::kPng;
  }
  return absl::InvalidArgumentError("neither a JPEG nor a PNG file");
}

absl::StatusOr<std::optional<std::string>> ExtractManifestStore(absl::string_view asset,
                                                                MediaType type,
                                                                const C2paLimits& limits) {
  if (asset.size() > limits.max_asset_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("asset over ", limits.max_asset_bytes, " bytes"));
  }
  switch (type) {
    case MediaType::kJpeg:
      return ExtractFromJpeg(asset, limits);
    case MediaType::kPng:
      return ExtractFromPng(asset, limits);
  }
  return absl::InvalidArgumentError("unknown media type");
}

}  // namespace portcullis::verifier::c2pa
