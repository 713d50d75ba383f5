#include "verifier-service/src/store/pg_site_store.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "pqxx/nontransaction"
#include "pqxx/result"
#include "pqxx/row"
#include "pqxx/transaction"
#include "verifier-service/src/store/site_binding_sql.h"

namespace portcullis::verifier::store {
namespace {

#define PORTCULLIS_MICROS(column) "(extract(epoch FROM " column ") * 1000000)::bigint"

// Every statement filters by the caller's site binding (the last parameter; see
// site_binding_sql.h), so a bound token touches only its own sites' rows.

// The no-op DO UPDATE makes RETURNING answer for an existing row too; `xmax = 0` holds only for
// a row this statement inserted. No row when the domain is outside the binding.
constexpr char kAddSite[] =
    "INSERT INTO sites (domain) "
    "SELECT $1::text WHERE " PORTCULLIS_SITE_VISIBLE("$1::text", "$2") " "
    "ON CONFLICT (domain) DO UPDATE SET domain = sites.domain "
    "RETURNING " PORTCULLIS_MICROS("created_at") ", (xmax = 0), moderation, avatar_proxy";

constexpr char kListSites[] =
    "SELECT s.domain, " PORTCULLIS_MICROS("s.created_at") ", "
    "(SELECT count(*) FROM targets t WHERE t.site_id = s.id), s.moderation, s.avatar_proxy "
    "FROM sites s WHERE s.domain > $1 AND " PORTCULLIS_SITE_VISIBLE("s.domain", "$3") " "
    "ORDER BY s.domain LIMIT $2";

constexpr char kRemoveSiteTargets[] =
    "DELETE FROM targets WHERE site_id = (SELECT id FROM sites WHERE domain = $1 "
    "  AND " PORTCULLIS_SITE_VISIBLE("domain", "$2") ")";
constexpr char kRemoveSite[] =
    "DELETE FROM sites WHERE domain = $1 AND " PORTCULLIS_SITE_VISIBLE("domain", "$2");

// No row when the site is not served (or outside the binding).
constexpr char kAddTarget[] =
    "INSERT INTO targets (site_id, kind, url) SELECT id, $2, $3 FROM sites WHERE domain = $1 "
    "  AND " PORTCULLIS_SITE_VISIBLE("domain", "$4") " "
    "ON CONFLICT (url, kind) DO UPDATE SET url = targets.url "
    "RETURNING " PORTCULLIS_MICROS("created_at") ", (xmax = 0)";

constexpr char kSiteExists[] =
    "SELECT count(*) FROM sites WHERE domain = $1 AND " PORTCULLIS_SITE_VISIBLE("domain", "$2");

// Keyset pagination on the unique (url, kind).
constexpr char kListTargets[] =
    "SELECT t.url, t.kind, s.domain, " PORTCULLIS_MICROS("t.created_at") " "
    "FROM targets t JOIN sites s ON s.id = t.site_id "
    "WHERE ($1 = '' OR s.domain = $1) AND (t.url, t.kind) > ($2, $3) "
    "  AND " PORTCULLIS_SITE_VISIBLE("s.domain", "$5") " "
    "ORDER BY t.url, t.kind LIMIT $4";

constexpr char kRemoveTarget[] =
    "DELETE FROM targets t USING sites s WHERE s.id = t.site_id AND t.url = $1 AND t.kind = $2 "
    "  AND " PORTCULLIS_SITE_VISIBLE("s.domain", "$3") " "
    "RETURNING t.url, t.kind, s.domain, " PORTCULLIS_MICROS("t.created_at");

// Whether a target RemoveTarget did not find exists at all (then it is another site's): the
// answer is all a bound caller learns of it.
constexpr char kTargetExists[] =
    "SELECT EXISTS (SELECT 1 FROM targets WHERE url = $1 AND kind = $2)";

#undef PORTCULLIS_MICROS

std::string KindText(TargetKind kind) { return std::string(TargetKindName(kind)); }

TargetRecord TargetFromRow(const pqxx::row& row) {
  TargetRecord record;
  record.rule.url = row[0].as<std::string>();
  record.rule.kind =
      row[1].as<std::string>() == "PREFIX" ? TargetKind::kPrefix : TargetKind::kExact;
  record.rule.domain = row[2].as<std::string>();
  record.created_at = absl::FromUnixMicros(row[3].as<int64_t>());
  return record;
}

}  // namespace

absl::StatusOr<AddSiteResult> PgSiteStore::AddSite(const std::string& domain,
                                                   const SiteBinding& visible_sites) {
  if (!SiteVisible(visible_sites, domain)) {
    return SiteNotVisible(domain);
  }
  AddSiteResult result;
  result.site.domain = domain;
  bool refused = false;
  absl::Status status = pool_.Run("add_site", [&](pqxx::connection& connection) {
    pqxx::work transaction(connection);
    const pqxx::result rows =
        transaction.exec_params(kAddSite, domain, SiteBindingParameter(visible_sites));
    refused = rows.empty();
    if (refused) {
      return;
    }
    result.site.created_at = absl::FromUnixMicros(rows[0][0].as<int64_t>());
    result.created = rows[0][1].as<bool>();
    result.site.moderation = rows[0][2].as<std::string>();
    result.site.avatar_proxy = rows[0][3].as<bool>();
    transaction.commit();
  });
  if (!status.ok()) {
    return status;
  }
  if (refused) {
    return SiteNotVisible(domain);
  }
  return result;
}

absl::StatusOr<std::vector<SiteRecord>> PgSiteStore::ListSites(const std::string& after, int limit,
                                                               const SiteBinding& visible_sites) {
  std::vector<SiteRecord> sites;
  absl::Status status = pool_.Run("list_sites", [&](pqxx::connection& connection) {
    pqxx::nontransaction transaction(connection);
    const pqxx::result rows =
        transaction.exec_params(kListSites, after, limit, SiteBindingParameter(visible_sites));
    sites.clear();
    for (const pqxx::row& row : rows) {
      sites.push_back({row[0].as<std::string>(), absl::FromUnixMicros(row[1].as<int64_t>()),
                       row[2].as<int64_t>(), row[3].as<std::string>(), row[4].as<bool>()});
    }
  });
  if (!status.ok()) {
    return status;
  }
  return sites;
}

absl::StatusOr<int64_t> PgSiteStore::RemoveSite(const std::string& domain,
                                                const SiteBinding& visible_sites) {
  if (!SiteVisible(visible_sites, domain)) {
    return SiteNotVisible(domain);
  }
  const std::string binding = SiteBindingParameter(visible_sites);
  int64_t removed_targets = 0;
  bool found = false;
  absl::Status status = pool_.Run("remove_site", [&](pqxx::connection& connection) {
    pqxx::work transaction(connection);
    removed_targets = transaction.exec_params(kRemoveSiteTargets, domain, binding).affected_rows();
    found = transaction.exec_params(kRemoveSite, domain, binding).affected_rows() == 1;
    if (found) {
      transaction.commit();
    }
  });
  if (!status.ok()) {
    return status;
  }
  if (!found) {
    return absl::NotFoundError(absl::StrCat("site ", domain, " is not served"));
  }
  return removed_targets;
}

absl::StatusOr<AddTargetsResult> PgSiteStore::AddTargets(absl::Span<const TargetRule> rules,
                                                         const SiteBinding& visible_sites) {
  for (size_t i = 0; i < rules.size(); ++i) {
    if (!SiteVisible(visible_sites, rules[i].domain)) {
      return absl::PermissionDeniedError(
          absl::StrCat("target ", i, " (", rules[i].url, "): the token is not bound to site ",
                       rules[i].domain));
    }
  }
  const std::string binding = SiteBindingParameter(visible_sites);
  AddTargetsResult result;
  std::optional<size_t> unknown_site;
  absl::Status status = pool_.Run("add_targets", [&](pqxx::connection& connection) {
    result = AddTargetsResult();
    pqxx::work transaction(connection);
    for (size_t i = 0; i < rules.size(); ++i) {
      const TargetRule& rule = rules[i];
      const pqxx::result rows =
          transaction.exec_params(kAddTarget, rule.domain, KindText(rule.kind), rule.url, binding);
      if (rows.empty()) {
        unknown_site = i;
        return;  // Rolled back: all or nothing.
      }
      const bool created = rows[0][1].as<bool>();
      result.targets.push_back({rule, absl::FromUnixMicros(rows[0][0].as<int64_t>())});
      ++(created ? result.added : result.already_present);
    }
    transaction.commit();
  });
  if (!status.ok()) {
    return status;
  }
  if (unknown_site) {
    return absl::FailedPreconditionError(
        absl::StrCat("target ", *unknown_site, " (", rules[*unknown_site].url, "): site ",
                     rules[*unknown_site].domain, " is not served; add the site first"));
  }
  return result;
}

absl::StatusOr<std::vector<TargetRecord>> PgSiteStore::ListTargets(
    const std::string& domain, const std::optional<TargetRule>& after, int limit,
    const SiteBinding& visible_sites) {
  if (!domain.empty() && !SiteVisible(visible_sites, domain)) {
    return SiteNotVisible(domain);
  }
  const std::string binding = SiteBindingParameter(visible_sites);
  std::vector<TargetRecord> targets;
  bool site_missing = false;
  absl::Status status = pool_.Run("list_targets", [&](pqxx::connection& connection) {
    pqxx::nontransaction transaction(connection);
    targets.clear();
    if (!domain.empty()) {
      site_missing = transaction.exec_params1(kSiteExists, domain, binding)[0].as<int64_t>() == 0;
      if (site_missing) {
        return;
      }
    }
    // ("", "") sorts before every stored (url, kind): urls are never empty.
    const pqxx::result rows =
        transaction.exec_params(kListTargets, domain, after ? after->url : std::string(),
                                after ? KindText(after->kind) : std::string(), limit, binding);
    for (const pqxx::row& row : rows) {
      targets.push_back(TargetFromRow(row));
    }
  });
  if (!status.ok()) {
    return status;
  }
  if (site_missing) {
    return absl::NotFoundError(absl::StrCat("site ", domain, " is not served"));
  }
  return targets;
}

absl::StatusOr<TargetRecord> PgSiteStore::RemoveTarget(const std::string& url, TargetKind kind,
                                                       const SiteBinding& visible_sites) {
  std::optional<TargetRecord> removed;
  bool elsewhere = false;
  absl::Status status = pool_.Run("remove_target", [&](pqxx::connection& connection) {
    removed.reset();
    elsewhere = false;
    pqxx::work transaction(connection);
    const pqxx::result rows = transaction.exec_params(kRemoveTarget, url, KindText(kind),
                                                      SiteBindingParameter(visible_sites));
    if (!rows.empty()) {
      removed = TargetFromRow(rows[0]);
    } else if (!visible_sites.empty()) {
      elsewhere = transaction.exec_params1(kTargetExists, url, KindText(kind))[0].as<bool>();
    }
    transaction.commit();
  });
  if (!status.ok()) {
    return status;
  }
  if (elsewhere) {
    return absl::PermissionDeniedError("the target is of a site the token is not bound to");
  }
  if (!removed) {
    return absl::NotFoundError("no such target is registered");
  }
  return *std::move(removed);
}

}  // namespace portcullis::verifier::store
