#include "verifier-service/src/store/pg_moderation_store.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "pqxx/nontransaction"
#include "pqxx/result"
#include "pqxx/row"
#include "pqxx/transaction"
#include "verifier-service/src/store/public_mentions_sql.h"
#include "verifier-service/src/store/site_binding_sql.h"
#include "verifier-service/src/store/uuid.h"

namespace portcullis::verifier::store {
namespace {

#define PORTCULLIS_MODERATION_MICROS(column) "(extract(epoch FROM " column ") * 1000000)::bigint"

// $1 domain, $2 policy, $3 binding.
constexpr char kModerationSetPolicy[] =
    "UPDATE sites SET moderation = coalesce($2, moderation), "
    "avatar_proxy = coalesce($4::boolean, avatar_proxy) "
    "WHERE domain = $1 AND " PORTCULLIS_SITE_VISIBLE("domain", "$3")
    " RETURNING " PORTCULLIS_MODERATION_MICROS("created_at") ", "
    "(SELECT count(*) FROM targets t WHERE t.site_id = sites.id), moderation, avatar_proxy";

// One review action ($2 APPROVE / REJECT / HIDE / UNHIDE) on mention $1, in place. HIDE keeps
// the state it replaces (unless already hidden); UNHIDE restores it (a mention that is not
// hidden keeps its state). $3 note, $4 reviewer, $5 binding.
constexpr char kModerationReview[] =
    "UPDATE mentions m SET "
    "  review = CASE $2 WHEN 'APPROVE' THEN 'APPROVED' WHEN 'REJECT' THEN 'REJECTED' "
    "    WHEN 'HIDE' THEN 'HIDDEN' "
    "    ELSE CASE WHEN m.review = 'HIDDEN' THEN coalesce(m.review_before_hide, 'UNREVIEWED') "
    "      ELSE m.review END END, "
    "  review_before_hide = CASE WHEN $2 <> 'HIDE' THEN NULL "
    "    WHEN m.review = 'HIDDEN' THEN m.review_before_hide ELSE m.review END, "
    "  review_note = nullif($3, ''), review_reason = NULL, reviewed_at = now(), "
    "  reviewed_by = $4, updated_at = now() "
    "WHERE m.id = $1::uuid AND " PORTCULLIS_SITE_VISIBLE("m.target_domain", "$5");

constexpr char kModerationMentionExists[] = "SELECT EXISTS (SELECT 1 FROM mentions WHERE id = $1::uuid)";

// $1 domain, $2 binding.
constexpr char kModerationSiteId[] =
    "SELECT id::text FROM sites WHERE domain = $1 AND " PORTCULLIS_SITE_VISIBLE("domain", "$2");

// $1 site id, $2 kind, $3 value. The no-op DO UPDATE makes RETURNING answer for an existing row.
constexpr char kModerationAddRule[] =
    "INSERT INTO approval_rules (site_id, kind, value) VALUES ($1::uuid, $2, $3) "
    "ON CONFLICT (site_id, kind, value) DO UPDATE SET value = approval_rules.value "
    "RETURNING id::text, " PORTCULLIS_MODERATION_MICROS("created_at") ", (xmax = 0)";

// What a rule ($2 kind, $3 value) approves now on site $1 (domain): its VERIFIED, UNREVIEWED
// mentions that it matches (the rule's match is the one public_mentions_sql.h applies).
constexpr char kModerationRuleReach[] =
    "SELECT count(*) FROM mentions m, (SELECT $2::text AS kind, $3::text AS value) r "
    "WHERE m.target_domain = $1 AND m.state = 'VERIFIED' AND m.review = 'UNREVIEWED' AND "
    PORTCULLIS_APPROVAL_RULE_MATCHES;

constexpr char kModerationListRules[] =
    "SELECT id::text, kind, value, " PORTCULLIS_MODERATION_MICROS("created_at") " "
    "FROM approval_rules WHERE site_id = $1::uuid ORDER BY created_at, id LIMIT $2";

// $1 id, $2 binding.
constexpr char kModerationRemoveRule[] =
    "DELETE FROM approval_rules r USING sites s WHERE r.id = $1::uuid AND s.id = r.site_id "
    "  AND " PORTCULLIS_SITE_VISIBLE("s.domain", "$2") " "
    "RETURNING r.id::text, s.domain, r.kind, r.value, "
    PORTCULLIS_MODERATION_MICROS("r.created_at");

constexpr char kModerationRuleExists[] = "SELECT EXISTS (SELECT 1 FROM approval_rules WHERE id = $1::uuid)";

#undef PORTCULLIS_MODERATION_MICROS

ApprovalRuleKind ParseApprovalRuleKind(const std::string& text) {
  return text == "SOURCE_PREFIX" ? ApprovalRuleKind::kSourcePrefix : ApprovalRuleKind::kAuthorUrl;
}

absl::Status NoSuchModerationSite(const std::string& domain) {
  return absl::NotFoundError(absl::StrCat("site ", domain, " is not served"));
}

}  // namespace

const char* ModerationName(Moderation moderation) {
  switch (moderation) {
    case Moderation::kOff:
      return "off";
    case Moderation::kFirstTimeAuthors:
      return "first-time-authors";
    case Moderation::kAll:
      return "all";
  }
  return "off";
}

std::optional<Moderation> ParseModeration(absl::string_view name) {
  for (const Moderation moderation :
       {Moderation::kOff, Moderation::kFirstTimeAuthors, Moderation::kAll}) {
    if (name == ModerationName(moderation)) {
      return moderation;
    }
  }
  return std::nullopt;
}

const char* ReviewActionName(ReviewAction action) {
  switch (action) {
    case ReviewAction::kApprove:
      return "APPROVE";
    case ReviewAction::kReject:
      return "REJECT";
    case ReviewAction::kHide:
      return "HIDE";
    case ReviewAction::kUnhide:
      return "UNHIDE";
  }
  return "UNHIDE";
}

const char* ApprovalRuleKindName(ApprovalRuleKind kind) {
  return kind == ApprovalRuleKind::kSourcePrefix ? "SOURCE_PREFIX" : "AUTHOR_URL";
}

absl::StatusOr<SiteRecord> PgModerationStore::SetSiteSettings(const std::string& domain,
                                                              const SiteSettingsChange& change,
                                                              const SiteBinding& visible_sites) {
  if (!SiteVisible(visible_sites, domain)) {
    return SiteNotVisible(domain);
  }
  SiteRecord site;
  site.domain = domain;
  bool found = false;
  absl::Status status = pool_.Run("set_moderation", [&](pqxx::connection& connection) {
    pqxx::work transaction(connection);
    const pqxx::result rows = transaction.exec_params(
        kModerationSetPolicy, domain,
        change.moderation ? std::optional<std::string>(ModerationName(*change.moderation))
                          : std::nullopt,
        SiteBindingParameter(visible_sites), change.avatar_proxy);
    found = !rows.empty();
    if (!found) {
      return;
    }
    site.created_at = absl::FromUnixMicros(rows[0][0].as<int64_t>());
    site.target_count = rows[0][1].as<int64_t>();
    site.moderation = rows[0][2].as<std::string>();
    site.avatar_proxy = rows[0][3].as<bool>();
    transaction.commit();
  });
  if (!status.ok()) {
    return status;
  }
  if (!found) {
    return NoSuchModerationSite(domain);
  }
  return site;
}

absl::Status PgModerationStore::Review(absl::string_view mention_id, ReviewAction action,
                                       const std::string& note, const std::string& reviewer,
                                       const SiteBinding& visible_sites) {
  if (!IsUuid(mention_id)) {
    return absl::InvalidArgumentError("mention id is not a UUID");
  }
  bool found = false;
  bool elsewhere = false;
  absl::Status status = pool_.Run("review_mention", [&](pqxx::connection& connection) {
    pqxx::work transaction(connection);
    found = transaction
                .exec_params(kModerationReview, std::string(mention_id), ReviewActionName(action), note,
                             reviewer, SiteBindingParameter(visible_sites))
                .affected_rows() == 1;
    if (!found && !visible_sites.empty()) {
      elsewhere = transaction.exec_params1(kModerationMentionExists, std::string(mention_id))[0].as<bool>();
    }
    transaction.commit();
  });
  if (!status.ok()) {
    return status;
  }
  if (elsewhere) {
    return absl::PermissionDeniedError("the mention is of a site the token is not bound to");
  }
  if (!found) {
    return absl::NotFoundError("no mention has this id");
  }
  return absl::OkStatus();
}

absl::StatusOr<AddApprovalRuleResult> PgModerationStore::AddRule(
    const ApprovalRuleRecord& rule, bool dry_run, const SiteBinding& visible_sites) {
  if (!SiteVisible(visible_sites, rule.site)) {
    return SiteNotVisible(rule.site);
  }
  AddApprovalRuleResult result;
  bool missing = false;
  absl::Status status = pool_.Run("add_approval_rule", [&](pqxx::connection& connection) {
    result = AddApprovalRuleResult();
    result.rule = rule;
    pqxx::work transaction(connection);
    const pqxx::result site =
        transaction.exec_params(kModerationSiteId, rule.site, SiteBindingParameter(visible_sites));
    missing = site.empty();
    if (missing) {
      return;
    }
    const char* kind = ApprovalRuleKindName(rule.kind);
    result.reach =
        transaction.exec_params1(kModerationRuleReach, rule.site, kind, rule.value)[0].as<int64_t>();
    if (dry_run) {
      return;
    }
    const pqxx::row added =
        transaction.exec_params1(kModerationAddRule, site[0][0].as<std::string>(), kind, rule.value);
    result.rule.rule_id = added[0].as<std::string>();
    result.rule.created_at = absl::FromUnixMicros(added[1].as<int64_t>());
    result.created = added[2].as<bool>();
    transaction.commit();
  });
  if (!status.ok()) {
    return status;
  }
  if (missing) {
    return NoSuchModerationSite(rule.site);
  }
  return result;
}

absl::StatusOr<std::vector<ApprovalRuleRecord>> PgModerationStore::ListRules(
    const std::string& site, const SiteBinding& visible_sites) {
  if (!SiteVisible(visible_sites, site)) {
    return SiteNotVisible(site);
  }
  std::vector<ApprovalRuleRecord> rules;
  bool missing = false;
  absl::Status status = pool_.Run("list_approval_rules", [&](pqxx::connection& connection) {
    rules.clear();
    pqxx::nontransaction transaction(connection);
    const pqxx::result found =
        transaction.exec_params(kModerationSiteId, site, SiteBindingParameter(visible_sites));
    missing = found.empty();
    if (missing) {
      return;
    }
    for (const pqxx::row& row : transaction.exec_params(
             kModerationListRules, found[0][0].as<std::string>(), kMaxApprovalRules)) {
      rules.push_back({row[0].as<std::string>(), site, ParseApprovalRuleKind(row[1].as<std::string>()),
                       row[2].as<std::string>(), absl::FromUnixMicros(row[3].as<int64_t>())});
    }
  });
  if (!status.ok()) {
    return status;
  }
  if (missing) {
    return NoSuchModerationSite(site);
  }
  return rules;
}

absl::StatusOr<ApprovalRuleRecord> PgModerationStore::RemoveRule(
    absl::string_view rule_id, const SiteBinding& visible_sites) {
  if (!IsUuid(rule_id)) {
    return absl::InvalidArgumentError("rule id is not a UUID");
  }
  std::optional<ApprovalRuleRecord> removed;
  bool elsewhere = false;
  absl::Status status = pool_.Run("remove_approval_rule", [&](pqxx::connection& connection) {
    removed.reset();
    pqxx::work transaction(connection);
    const pqxx::result rows = transaction.exec_params(kModerationRemoveRule, std::string(rule_id),
                                                      SiteBindingParameter(visible_sites));
    if (!rows.empty()) {
      const pqxx::row& row = rows[0];
      removed = ApprovalRuleRecord{row[0].as<std::string>(), row[1].as<std::string>(),
                                   ParseApprovalRuleKind(row[2].as<std::string>()),
                                   row[3].as<std::string>(),
                                   absl::FromUnixMicros(row[4].as<int64_t>())};
    } else if (!visible_sites.empty()) {
      elsewhere = transaction.exec_params1(kModerationRuleExists, std::string(rule_id))[0].as<bool>();
    }
    transaction.commit();
  });
  if (!status.ok()) {
    return status;
  }
  if (elsewhere) {
    return absl::PermissionDeniedError("the rule is of a site the token is not bound to");
  }
  if (!removed) {
    return absl::NotFoundError("no approval rule has this id");
  }
  return *removed;
}

}  // namespace portcullis::verifier::store
