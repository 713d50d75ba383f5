#include "verifier-service/src/c2pa/cbor_reader.h"

#include <cbor.h>

#include <limits>

#include "absl/strings/str_cat.h"
#include "common/encoding/utf8.h"
#include "common/status/status_macros.h"

namespace portcullis::verifier::c2pa {
namespace {

constexpr uint8_t kBreak = 0xFF;

class Scanner {
 public:
  Scanner(absl::string_view bytes, const C2paLimits& limits) : rest_(bytes), limits_(limits) {}

  absl::Status ScanItem(size_t depth) {
    if (depth > limits_.max_cbor_depth) {
      return absl::InvalidArgumentError(
          absl::StrCat("CBOR nested deeper than ", limits_.max_cbor_depth));
    }
    if (++items_ > limits_.max_cbor_items) {
      return absl::InvalidArgumentError(
          absl::StrCat("CBOR: more than ", limits_.max_cbor_items, " items"));
    }
    ASSIGN_OR_RETURN(const uint8_t initial, Byte());
    const int major = initial >> 5;
    const int info = initial & 0x1F;
    if (info == 31) {
      return ScanIndefinite(major, depth);
    }
    ASSIGN_OR_RETURN(const uint64_t argument, Argument(info));
    switch (major) {
      case 0:
      case 1:  // Integers: the argument was all.
        return absl::OkStatus();
      case 7:
        // false, true, null, undefined and the three float widths; libcbor 0.8 refuses the
        // unassigned simple values, and so does this scan.
        if ((info >= 20 && info <= 23) || (info >= 25 && info <= 27)) {
          return absl::OkStatus();
        }
        return absl::InvalidArgumentError("CBOR: an unassigned simple value");
      case 2:
        return Skip(argument);
      case 3:
        return SkipText(argument);
      case 4:
        if (argument > rest_.size()) {
          return Truncated();
        }
        for (uint64_t i = 0; i < argument; ++i) {
          RETURN_IF_ERROR(ScanItem(depth + 1));
        }
        return absl::OkStatus();
      case 5:
        if (argument > rest_.size() / 2) {
          return Truncated();
        }
        for (uint64_t i = 0; i < 2 * argument; ++i) {
          RETURN_IF_ERROR(ScanItem(depth + 1));
        }
        return absl::OkStatus();
      case 6:
        // libcbor 0.8 refuses the one-byte tag heads 6-20 as unassigned (COSE_Sign1's 18 among
        // them: ParseCoseSign1 takes that one off itself); refuse them here too, so that what the
        // scan accepts, libcbor decodes.
        if (info >= 6 && info <= 20) {
          return absl::InvalidArgumentError(absl::StrCat("CBOR: tag ", info, " in one byte"));
        }
        return ScanItem(depth + 1);
    }
    return absl::InvalidArgumentError("CBOR: unknown major type");
  }

  bool done() const { return rest_.empty(); }

 private:
  absl::Status ScanIndefinite(int major, size_t depth) {
    switch (major) {
      case 2:
      case 3:  // Chunks: definite strings of the same major type.
        while (true) {
          ASSIGN_OR_RETURN(const uint8_t initial, Byte());
          if (initial == kBreak) {
            return absl::OkStatus();
          }
          if ((initial >> 5) != major || (initial & 0x1F) == 31) {
            return absl::InvalidArgumentError("CBOR: bad chunk in an indefinite string");
          }
          if (++items_ > limits_.max_cbor_items) {
            return absl::InvalidArgumentError("CBOR: too many items");
          }
          ASSIGN_OR_RETURN(const uint64_t length, Argument(initial & 0x1F));
          RETURN_IF_ERROR(major == 3 ? SkipText(length) : Skip(length));
        }
      case 4:
      case 5:
        for (uint64_t count = 0;; ++count) {
          if (!rest_.empty() && static_cast<uint8_t>(rest_[0]) == kBreak) {
            rest_.remove_prefix(1);
            if (major == 5 && count % 2 != 0) {
              return absl::InvalidArgumentError("CBOR: a map with a key and no value");
            }
            return absl::OkStatus();
          }
          RETURN_IF_ERROR(ScanItem(depth + 1));
        }
    }
    return absl::InvalidArgumentError("CBOR: indefinite length on a type without one");
  }

  absl::StatusOr<uint8_t> Byte() {
    if (rest_.empty()) {
      return Truncated();
    }
    const auto byte = static_cast<uint8_t>(rest_[0]);
    rest_.remove_prefix(1);
    return byte;
  }

  absl::StatusOr<uint64_t> Argument(int info) {
    if (info < 24) {
      return static_cast<uint64_t>(info);
    }
    if (info > 27) {
      return absl::InvalidArgumentError("CBOR: reserved additional information");
    }
    const size_t width = size_t{1} << (info - 24);
    if (rest_.size() < width) {
      return Truncated();
    }
    uint64_t value = 0;
    for (size_t i = 0; i < width; ++i) {
      value = (value << 8) | static_cast<uint8_t>(rest_[i]);
    }
    rest_.remove_prefix(width);
    return value;
  }

  absl::Status Skip(uint64_t length) {
    if (length > rest_.size()) {
      return Truncated();
    }
    rest_.remove_prefix(static_cast<size_t>(length));
    return absl::OkStatus();
  }

  // Text strings are UTF-8 (RFC 8949 section 3.1), as libcbor checks too.
  absl::Status SkipText(uint64_t length) {
    if (length > rest_.size()) {
      return Truncated();
    }
    if (!encoding::IsValidUtf8(rest_.substr(0, static_cast<size_t>(length)))) {
      return absl::InvalidArgumentError("CBOR: a text string that is not UTF-8");
    }
    return Skip(length);
  }

  static absl::Status Truncated() { return absl::InvalidArgumentError("CBOR: truncated"); }

  absl::string_view rest_;
  const C2paLimits& limits_;
  size_t items_ = 0;
};

}  // namespace

void CborItemDeleter::operator()(cbor_item_t* item) const { cbor_decref(&item); }

absl::Status ScanCbor(absl::string_view bytes, const C2paLimits& limits) {
  Scanner scanner(bytes, limits);
  RETURN_IF_ERROR(scanner.ScanItem(0));
  if (!scanner.done()) {
    return absl::InvalidArgumentError("CBOR: bytes after the data item");
  }
  return absl::OkStatus();
}

absl::StatusOr<CborItemPtr> DecodeCbor(absl::string_view bytes, const C2paLimits& limits) {
  RETURN_IF_ERROR(ScanCbor(bytes, limits));
  cbor_load_result result{};
  CborItemPtr item(cbor_load(reinterpret_cast<cbor_data>(bytes.data()), bytes.size(), &result));
  if (item == nullptr || result.error.code != CBOR_ERR_NONE) {
    return absl::InvalidArgumentError(
        absl::StrCat("CBOR: libcbor refused the item at ", result.error.position));
  }
  return item;
}

const cbor_item_t* CborMapGet(const cbor_item_t* map, absl::string_view key) {
  if (map == nullptr || !cbor_isa_map(map)) {
    return nullptr;
  }
  const cbor_pair* pairs = cbor_map_handle(map);
  const size_t size = cbor_map_size(map);
  for (size_t i = 0; i < size; ++i) {
    if (CborText(pairs[i].key) == key) {
      return pairs[i].value;
    }
  }
  return nullptr;
}

const cbor_item_t* CborMapGet(const cbor_item_t* map, int64_t key) {
  if (map == nullptr || !cbor_isa_map(map)) {
    return nullptr;
  }
  const cbor_pair* pairs = cbor_map_handle(map);
  const size_t size = cbor_map_size(map);
  for (size_t i = 0; i < size; ++i) {
    if (CborInt(pairs[i].key) == key) {
      return pairs[i].value;
    }
  }
  return nullptr;
}

std::optional<absl::string_view> CborText(const cbor_item_t* item) {
  if (item == nullptr || !cbor_isa_string(item) || !cbor_string_is_definite(item)) {
    return std::nullopt;
  }
  return absl::string_view(reinterpret_cast<const char*>(cbor_string_handle(item)),
                           cbor_string_length(item));
}

std::optional<absl::string_view> CborBytes(const cbor_item_t* item) {
  if (item == nullptr || !cbor_isa_bytestring(item) || !cbor_bytestring_is_definite(item)) {
    return std::nullopt;
  }
  return absl::string_view(reinterpret_cast<const char*>(cbor_bytestring_handle(item)),
                           cbor_bytestring_length(item));
}

std::optional<int64_t> CborInt(const cbor_item_t* item) {
  if (item == nullptr || !cbor_is_int(item)) {
    return std::nullopt;
  }
  const uint64_t value = cbor_get_int(item);
  if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return std::nullopt;
  }
  const auto magnitude = static_cast<int64_t>(value);
  return cbor_isa_negint(item) ? -1 - magnitude : magnitude;
}

std::optional<size_t> CborArraySize(const cbor_item_t* item) {
  if (item == nullptr || !cbor_isa_array(item)) {
    return std::nullopt;
  }
  return cbor_array_size(item);
}

const cbor_item_t* CborArrayAt(const cbor_item_t* item, size_t index) {
  if (item == nullptr || !cbor_isa_array(item) || index >= cbor_array_size(item)) {
    return nullptr;
  }
  return cbor_array_handle(item)[index];
}

}  // namespace portcullis::verifier::c2pa
