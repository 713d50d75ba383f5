#pragma once

// CBOR (RFC 8949) as C2PA stores claims, assertions and COSE signatures, decoded by libcbor after
// a bounded pre-scan of our own: libcbor allocates what a length prefix declares and frees items
// recursively, so a hostile prefix or a deeply nested value is refused before libcbor sees it.

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "verifier-service/src/c2pa/c2pa_limits.h"

struct cbor_item_t;

namespace portcullis::verifier::c2pa {

struct CborItemDeleter {
  void operator()(cbor_item_t* item) const;
};
using CborItemPtr = std::unique_ptr<cbor_item_t, CborItemDeleter>;

// Checks that `bytes` is exactly one well-formed CBOR data item within `limits` (nesting depth,
// item count; every declared length fits in what remains). kInvalidArgument otherwise.
absl::Status ScanCbor(absl::string_view bytes, const C2paLimits& limits);

// ScanCbor, then libcbor's decoding of the item.
absl::StatusOr<CborItemPtr> DecodeCbor(absl::string_view bytes, const C2paLimits& limits);

// Accessors that answer nullptr / nullopt for an item of another type; views point into the item.
// A map's value under a text key, or under an integer key.
const cbor_item_t* CborMapGet(const cbor_item_t* map, absl::string_view key);
const cbor_item_t* CborMapGet(const cbor_item_t* map, int64_t key);
std::optional<absl::string_view> CborText(const cbor_item_t* item);
std::optional<absl::string_view> CborBytes(const cbor_item_t* item);
std::optional<int64_t> CborInt(const cbor_item_t* item);
// The size of an array (nullopt when not one), and its element at `index` (nullptr past the end).
std::optional<size_t> CborArraySize(const cbor_item_t* item);
const cbor_item_t* CborArrayAt(const cbor_item_t* item, size_t index);

}  // namespace portcullis::verifier::c2pa
