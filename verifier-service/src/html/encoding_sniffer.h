#pragma once

// The character encoding of a fetched page, decided the way browsers decide it (HTML Standard
// §13.2.3.2 "Determining the character encoding", with the WHATWG Encoding Standard's labels),
// and the page decoded to UTF-8 through ICU. Pure: no I/O.
//
//   1. a byte order mark: UTF-8 (EF BB BF), UTF-16BE (FE FF), UTF-16LE (FF FE) — it wins over
//      everything and is not part of the text;
//   2. the charset parameter of the Content-Type header, when its label is known;
//   3. the <meta charset> / <meta http-equiv="Content-Type" content="...charset=..."> prescan of
//      the first 1,024 bytes (a meta tag past them is not seen; UTF-16 there means UTF-8,
//      x-user-defined windows-1252);
//   4. autodetection, which the standard allows before the default: bytes that are all valid
//      UTF-8 and not all ASCII are UTF-8 (pages that say nothing and are UTF-8, as most are);
//   5. the default, windows-1252.
// Labels are the WHATWG table's ("latin1", "iso-8859-1", "ascii", "us-ascii" all mean windows-1252;
// "x-sjis" Shift_JIS; unknown labels are ignored and the next step decides). The result is always
// valid UTF-8: an ill-formed or unmapped sequence becomes U+FFFD, never an error or a crash.

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace portcullis::verifier::html {

// The bytes the prescan reads.
inline constexpr size_t kEncodingPrescanBytes = 1024;

struct DecodedPage {
  std::string utf8;
  // The WHATWG name of the encoding used ("UTF-8", "windows-1252", "Shift_JIS", "UTF-16LE").
  std::string encoding;
  // Which step decided it: "bom", "content-type", "meta", "detected" or "default".
  std::string source;
};

// The page `bytes`, served with Content-Type `content_type` (as sent; may be empty), as UTF-8.
DecodedPage DecodeToUtf8(absl::string_view bytes, absl::string_view content_type);

// The WHATWG "get an encoding" for `label` (ASCII whitespace trimmed, case-insensitive): the
// encoding's name, or nullopt for an unknown label.
std::optional<std::string> EncodingForLabel(absl::string_view label);

// The encoding named by the charset parameter of a Content-Type value ("text/html;
// charset=ISO-8859-1" → windows-1252), or nullopt when there is none or its label is unknown.
std::optional<std::string> ContentTypeEncoding(absl::string_view content_type);

// The HTML prescan of the first kEncodingPrescanBytes of `bytes` for a meta charset, or nullopt.
std::optional<std::string> PrescanMetaEncoding(absl::string_view bytes);

// `bytes` (without a BOM) decoded from `encoding` (a name EncodingForLabel returns) to UTF-8.
std::string DecodeAs(absl::string_view bytes, absl::string_view encoding);

}  // namespace portcullis::verifier::html
