#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "verifier-service/src/store/site_binding.h"

namespace portcullis::verifier::store {

// What an erasure (issue 17) matches.
enum class ErasureKind {
  kAuthorUrl,   // mentions whose author_url is exactly the value
  kSourceHost,  // mentions whose source's serialized host is the value
  kMention,     // one mention, by id (a UUID)
};

// A validated key: the value normalized by the caller (a serialized URL or host, or a UUID).
struct ErasureKey {
  ErasureKind kind = ErasureKind::kMention;
  std::string value;
};

struct ErasedMentionRecord {
  std::string mention_id;
  std::string source;
  std::string target;
  std::string site;  // The target's domain.
};

// Erasures listed in an answer at most (the count is exact).
inline constexpr int kMaxListedErasures = 1000;

struct ErasureOutcome {
  int64_t mentions = 0;
  std::vector<ErasedMentionRecord> listed;  // At most kMaxListedErasures, oldest first.
  int64_t tombstones = 0;
};

// Erasure of a person's mentions and the tombstones that keep them erased. Tombstones hold only
// salted SHA-256 hashes (the salt is made once per database): of each erased mention's source
// hash (so a re-send of that source is recognized), and for a source host erasure of the host.
// The intake reads them inside its batch statement (pg_mention_store.cc). Thread-safe; blocks.
class ErasureStore {
 public:
  virtual ~ErasureStore() = default;

  // In one transaction: the mentions matching `key` of the sites in `sites` (empty: every site)
  // are deleted with their content and jobs, and their tombstones written: for the mentions'
  // sites when `sites` is a binding or the key is one mention, for every site otherwise. With
  // `dry_run`, only what would go is read. PERMISSION_DENIED when the key is a mention of a site
  // outside `sites`; NOT_FOUND when it is a mention that does not exist.
  virtual absl::StatusOr<ErasureOutcome> Erase(const ErasureKey& key, bool dry_run,
                                               const SiteBinding& sites) = 0;

  // Removes the tombstones an Erase of `key` wrote, of the sites in `sites` only (a bound caller
  // cannot remove an unbound caller's every-site tombstones), and the FAILED `erased` pairs that
  // re-sends made under them, so that the next re-send is handled as new; the number of
  // tombstones removed.
  virtual absl::StatusOr<int64_t> Undo(const ErasureKey& key, const SiteBinding& sites) = 0;
};

}  // namespace portcullis::verifier::store
