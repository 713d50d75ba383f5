#pragma once

#include <string>
#include <vector>

namespace portcullis::verifier::store {

// What verification learned about a mention's source, as stored with a VERIFIED mention. Filled
// by the verification pipeline (html/: type, authorship, sanitizing), written by the stores.
// Every string is already capped and, for `content_html`, sanitized: stores do not re-check.
struct MentionContent {
  // "mention", "reply", "like", "repost", "bookmark" or "rsvp" (proto MentionType, lowercase).
  std::string type = "mention";
  std::string rsvp;  // "yes", "no", "maybe", "interested" for type "rsvp"; else empty.

  std::string author_name;
  std::string author_url;    // Absolute.
  std::string author_photo;  // Absolute.
  std::string author_note;   // Plain text.

  std::string name;       // The entry's name, when distinct from its content.
  std::string published;  // As written (ISO 8601).
  std::string url;        // The entry's canonical URL, absolute.

  std::string content_text;  // Plain text, capped.
  std::string content_html;  // Sanitized HTML, capped.
  bool content_truncated = false;
};

// Why a verification found no link: the links to the target's host the source does contain.
using LinkDiagnostic = std::vector<std::string>;

}  // namespace portcullis::verifier::store
