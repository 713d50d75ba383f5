#include "verifier-service/src/store/pg_delivery_store.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status/status_macros.h"
#include "pqxx/nontransaction"
#include "pqxx/result"
#include "pqxx/row"
#include "pqxx/transaction"
#include "verifier-service/src/store/site_binding_sql.h"

namespace portcullis::verifier::store {
namespace {

// A subscription is visible to a caller bound to sites ($n) when it is of one of them; a
// publisher's only to an unbound caller.
#define PORTCULLIS_SUBSCRIPTION_VISIBLE(param) \
  "(" param "::text[] = '{}' OR (s.site IS NOT NULL AND s.site = ANY (" param "::text[])))"

#define PORTCULLIS_SUBSCRIPTION_COLUMNS                                                      \
  "s.id::text, coalesce(s.site, ''), coalesce(s.publisher, ''), s.url, s.events::text[], "   \
  "s.signature_version, encode(s.signing_key, 'hex'), s.state, coalesce(s.disabled_reason, " \
  "''), (extract(epoch FROM s.created_at) * 1000000)::bigint"

#define PORTCULLIS_DELIVERY_COLUMNS                                                             \
  "d.id::text, d.subscription_id::text, d.webhook_id, d.event_type, d.state, d.attempts, "      \
  "coalesce(d.last_status_code, 0), coalesce(d.last_error, ''), "                               \
  "coalesce(d.last_latency_ms, 0), (extract(epoch FROM d.next_attempt_at) * 1000000)::bigint, " \
  "(extract(epoch FROM d.created_at) * 1000000)::bigint, "                                      \
  "(extract(epoch FROM d.delivered_at) * 1000000)::bigint, d.body"

constexpr char kSiteServed[] = "SELECT EXISTS (SELECT 1 FROM sites WHERE domain = $1)";

constexpr char kInsertSubscription[] =
    "INSERT INTO subscriptions AS s (site, publisher, url, events, signature_version, signing_key) "
    "VALUES (nullif($1, ''), nullif($2, ''), $3, $4::text[], $5, decode($6, 'hex')) "
    "RETURNING " PORTCULLIS_SUBSCRIPTION_COLUMNS;

constexpr char kListSubscriptions[] =
    "SELECT " PORTCULLIS_SUBSCRIPTION_COLUMNS " FROM subscriptions s "
    "WHERE ($1 = '' OR s.site = $1) AND " PORTCULLIS_SUBSCRIPTION_VISIBLE("$2") " "
    "ORDER BY s.created_at, s.id LIMIT $3";

constexpr char kRemoveSubscription[] =
    "WITH gone AS (DELETE FROM subscriptions s WHERE s.id = $1::uuid AND "
    PORTCULLIS_SUBSCRIPTION_VISIBLE("$2") " RETURNING s.id), "
    "counted AS (SELECT count(*) FROM deliveries d JOIN gone ON d.subscription_id = gone.id) "
    "SELECT (SELECT count(*) FROM gone), (SELECT * FROM counted)";

constexpr char kFindSubscription[] =
    "SELECT s.id FROM subscriptions s WHERE s.id = $1::uuid AND " PORTCULLIS_SUBSCRIPTION_VISIBLE(
        "$2");

constexpr char kInsertPing[] =
    "INSERT INTO deliveries AS d (subscription_id, event_type, body) "
    "SELECT s.id, 'ping', jsonb_build_object('type', 'ping', "
    "  'timestamp', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), "
    "  'data', jsonb_build_object('subscription_id', s.id::text))::text "
    "FROM subscriptions s WHERE s.id = $1::uuid AND " PORTCULLIS_SUBSCRIPTION_VISIBLE("$2") " "
    "RETURNING " PORTCULLIS_DELIVERY_COLUMNS;

constexpr char kListDeliveries[] =
    "SELECT " PORTCULLIS_DELIVERY_COLUMNS " FROM deliveries d "
    "JOIN subscriptions s ON s.id = d.subscription_id "
    "WHERE d.subscription_id = $1::uuid AND " PORTCULLIS_SUBSCRIPTION_VISIBLE("$2") " "
    "ORDER BY d.seq DESC LIMIT $3";

// The deliveries a replay takes: one by id, or a subscription's by filter. "Failed" is a
// delivery that ran out of attempts, or one still pending after a failed attempt.
#define PORTCULLIS_REPLAY_MATCH \
  "FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id "                      \
  "WHERE " PORTCULLIS_SUBSCRIPTION_VISIBLE("$1") " "                                        \
  "  AND ($2 = '' OR d.id = $2::uuid) AND ($3 = '' OR d.subscription_id = $3::uuid) "        \
  "  AND (NOT $4::boolean OR d.state = 'failed' "                                            \
  "       OR (d.state = 'pending' AND d.attempts > 0 AND d.lease_owner IS NULL)) "              \
  "  AND ($5::bigint IS NULL "                                                               \
  "       OR d.created_at >= timestamptz 'epoch' + $5::bigint * interval '1 microsecond') "  \
  "  AND ($6 = '' OR d.event_type = $6) "

constexpr char kCountReplay[] = "SELECT count(*) " PORTCULLIS_REPLAY_MATCH;

// Queued again from the start: same id and body, a fresh schedule, due now. A leased one keeps
// its lease (its attempt in flight records its answer, then it is sent again).
constexpr char kReplay[] =
    "WITH hit AS (SELECT d.id " PORTCULLIS_REPLAY_MATCH
    " FOR UPDATE OF d) "
    "UPDATE deliveries d SET state = 'pending', attempts = 0, next_attempt_at = now(), "
    "  delivered_at = NULL FROM hit WHERE d.id = hit.id";

constexpr PgStatement kClaim{
    "delivery_claim",
    "WITH due AS ("
    "  SELECT d.id FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id "
    "  WHERE d.state = 'pending' AND d.next_attempt_at <= now() AND s.state = 'active' "
    "    AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= now()) "
    "  ORDER BY d.next_attempt_at, d.seq LIMIT $2 FOR UPDATE OF d SKIP LOCKED) "
    "UPDATE deliveries d SET lease_owner = $1, "
    "  lease_expires_at = now() + $3::bigint * interval '1 microsecond', "
    "  attempts = d.attempts + 1 "
    "FROM due, subscriptions s WHERE d.id = due.id AND s.id = d.subscription_id "
    "RETURNING d.id::text, d.webhook_id, d.event_type, d.body, d.attempts, s.id::text, s.url, "
    "  s.signature_version, encode(s.signing_key, 'hex'), d.seq"};

constexpr PgStatement kRecord{
    "delivery_record",
    "UPDATE deliveries SET state = $3, "
    "  next_attempt_at = timestamptz 'epoch' + $4::bigint * interval '1 microsecond', "
    "  last_status_code = nullif($5::int, 0), last_error = nullif($6, ''), "
    "  last_latency_ms = $7::bigint, last_attempt_at = now(), "
    "  delivered_at = CASE WHEN $3 = 'delivered' THEN now() ELSE NULL END, "
    "  lease_owner = NULL, lease_expires_at = NULL "
    "WHERE id = $1::uuid AND lease_owner = $2"};

// 410: the subscription stops, and what it still had queued fails with it.
constexpr PgStatement kDisable{
    "delivery_disable_subscription",
    "WITH off AS (UPDATE subscriptions SET state = 'disabled', disabled_reason = $2, "
    "  disabled_at = now() WHERE id = $1::uuid AND state = 'active' RETURNING id) "
    "UPDATE deliveries d SET state = 'failed', last_error = 'subscription disabled' "
    "FROM off WHERE d.subscription_id = off.id AND d.state = 'pending' AND d.lease_owner IS NULL"};

constexpr char kStats[] =
    "SELECT count(*), coalesce((extract(epoch FROM now() - min(created_at)) * 1000000)::bigint, "
    "0) FROM (SELECT d.created_at FROM deliveries d JOIN subscriptions s "
    "  ON s.id = d.subscription_id WHERE d.state = 'pending' AND s.state = 'active' "
    "  ORDER BY d.next_attempt_at, d.seq LIMIT $1) q";

absl::Time FromMicros(const pqxx::field& field) {
  return field.is_null() ? absl::InfinitePast() : absl::FromUnixMicros(field.as<int64_t>());
}

std::vector<std::string> ParseTextArray(const pqxx::field& field) {
  std::vector<std::string> values;
  pqxx::array_parser parser = field.as_array();
  for (auto item = parser.get_next(); item.first != pqxx::array_parser::done;
       item = parser.get_next()) {
    if (item.first == pqxx::array_parser::string_value) {
      values.push_back(item.second);
    }
  }
  return values;
}

SubscriptionRecord ReadSubscription(const pqxx::row& row) {
  SubscriptionRecord record;
  record.id = row[0].as<std::string>();
  record.subscription.site = row[1].as<std::string>();
  record.subscription.publisher = row[2].as<std::string>();
  record.subscription.url = row[3].as<std::string>();
  record.subscription.events = ParseTextArray(row[4]);
  record.subscription.signature_version = row[5].as<std::string>();
  record.subscription.signing_key = absl::HexStringToBytes(row[6].as<std::string>());
  record.state = row[7].as<std::string>();
  record.disabled_reason = row[8].as<std::string>();
  record.created_at = FromMicros(row[9]);
  return record;
}

OutboundDelivery ReadDelivery(const pqxx::row& row) {
  OutboundDelivery record;
  record.id = row[0].as<std::string>();
  record.subscription_id = row[1].as<std::string>();
  record.webhook_id = row[2].as<std::string>();
  record.event_type = row[3].as<std::string>();
  record.state = row[4].as<std::string>();
  record.attempts = row[5].as<int>();
  record.last_status_code = row[6].as<int>();
  record.last_error = row[7].as<std::string>();
  record.last_latency_ms = row[8].as<int64_t>();
  record.next_attempt_at = FromMicros(row[9]);
  record.created_at = FromMicros(row[10]);
  if (!row[11].is_null()) {
    record.delivered_at = FromMicros(row[11]);
  }
  record.body = row[12].as<std::string>();
  return record;
}

absl::Status NoSuchSubscription() { return absl::NotFoundError("no such subscription"); }

bool IsUuid(const std::string& text) {
  if (text.size() != 36) {
    return false;
  }
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? c != '-' : !absl::ascii_isxdigit(c)) {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<SubscriptionRecord> PgDeliveryStore::CreateSubscription(
    const NewSubscription& subscription, const SiteBinding& visible_sites) {
  if (subscription.site.empty() && !visible_sites.empty()) {
    return absl::PermissionDeniedError("a publisher's subscriptions need an unbound token");
  }
  if (!subscription.site.empty() && !SiteVisible(visible_sites, subscription.site)) {
    return SiteNotVisible(subscription.site);
  }
  std::optional<SubscriptionRecord> created;
  bool served = true;
  RETURN_IF_ERROR(pool_.Run("create_subscription", [&](pqxx::connection& connection) {
    pqxx::work transaction(connection);
    if (!subscription.site.empty()) {
      served = transaction.exec_params1(kSiteServed, subscription.site)[0].as<bool>();
      if (!served) {
        return;
      }
    }
    created = ReadSubscription(transaction.exec_params1(
        kInsertSubscription, subscription.site, subscription.publisher, subscription.url,
        TextArrayLiteral(subscription.events), subscription.signature_version,
        absl::BytesToHexString(subscription.signing_key)));
    transaction.commit();
  }));
  if (!served) {
    return absl::NotFoundError("no served site has this domain");
  }
  return *std::move(created);
}

absl::StatusOr<std::vector<SubscriptionRecord>> PgDeliveryStore::ListSubscriptions(
    const std::string& site, const SiteBinding& visible_sites) {
  if (!site.empty() && !SiteVisible(visible_sites, site)) {
    return SiteNotVisible(site);
  }
  std::vector<SubscriptionRecord> records;
  RETURN_IF_ERROR(pool_.Run("list_subscriptions", [&](pqxx::connection& connection) {
    pqxx::nontransaction read(connection);
    for (const pqxx::row& row :
         read.exec_params(kListSubscriptions, site, SiteBindingParameter(visible_sites),
                          kMaxSubscriptionsListed)) {
      records.push_back(ReadSubscription(row));
    }
  }));
  return records;
}

absl::StatusOr<int64_t> PgDeliveryStore::RemoveSubscription(const std::string& id,
                                                            const SiteBinding& visible_sites) {
  if (!IsUuid(id)) {
    return NoSuchSubscription();
  }
  int64_t removed = 0;
  int64_t deliveries = 0;
  RETURN_IF_ERROR(pool_.Run("remove_subscription", [&](pqxx::connection& connection) {
    pqxx::work transaction(connection);
    const pqxx::row row =
        transaction.exec_params1(kRemoveSubscription, id, SiteBindingParameter(visible_sites));
    removed = row[0].as<int64_t>();
    deliveries = row[1].as<int64_t>();
    transaction.commit();
  }));
  if (removed == 0) {
    return NoSuchSubscription();
  }
  return deliveries;
}

absl::StatusOr<OutboundDelivery> PgDeliveryStore::QueuePing(const std::string& subscription_id,
                                                            const SiteBinding& visible_sites) {
  if (!IsUuid(subscription_id)) {
    return NoSuchSubscription();
  }
  std::optional<OutboundDelivery> record;
  RETURN_IF_ERROR(pool_.Run("queue_ping", [&](pqxx::connection& connection) {
    pqxx::work transaction(connection);
    const pqxx::result rows =
        transaction.exec_params(kInsertPing, subscription_id, SiteBindingParameter(visible_sites));
    if (!rows.empty()) {
      record = ReadDelivery(rows[0]);
    }
    transaction.commit();
  }));
  if (!record.has_value()) {
    return NoSuchSubscription();
  }
  return *std::move(record);
}

absl::StatusOr<std::vector<OutboundDelivery>> PgDeliveryStore::ListDeliveries(
    const std::string& subscription_id, int limit, const SiteBinding& visible_sites) {
  if (!IsUuid(subscription_id)) {
    return NoSuchSubscription();
  }
  std::vector<OutboundDelivery> records;
  bool found = true;
  RETURN_IF_ERROR(pool_.Run("list_deliveries", [&](pqxx::connection& connection) {
    pqxx::nontransaction read(connection);
    const std::string binding = SiteBindingParameter(visible_sites);
    found = !read.exec_params(kFindSubscription, subscription_id, binding).empty();
    if (!found) {
      return;
    }
    for (const pqxx::row& row : read.exec_params(kListDeliveries, subscription_id, binding,
                                                 std::clamp(limit, 1, kMaxDeliveryPage))) {
      records.push_back(ReadDelivery(row));
    }
  }));
  if (!found) {
    return NoSuchSubscription();
  }
  return records;
}

absl::StatusOr<int64_t> PgDeliveryStore::Replay(const ReplayFilter& filter,
                                                const SiteBinding& visible_sites) {
  if ((!filter.delivery_id.empty() && !IsUuid(filter.delivery_id)) ||
      (!filter.subscription_id.empty() && !IsUuid(filter.subscription_id))) {
    return absl::NotFoundError("no such delivery or subscription");
  }
  int64_t count = 0;
  RETURN_IF_ERROR(pool_.Run("replay_deliveries", [&](pqxx::connection& connection) {
    pqxx::work transaction(connection);
    const std::string binding = SiteBindingParameter(visible_sites);
    const std::optional<std::string> since =
        filter.since.has_value()
            ? std::optional<std::string>(absl::StrCat(absl::ToUnixMicros(*filter.since)))
            : std::nullopt;
    const char* since_param = since.has_value() ? since->c_str() : nullptr;
    if (filter.dry_run) {
      count = transaction
                  .exec_params1(kCountReplay, binding, filter.delivery_id, filter.subscription_id,
                                filter.failed_only, since_param, filter.event_type)[0]
                  .as<int64_t>();
    } else {
      count = transaction
                  .exec_params0(kReplay, binding, filter.delivery_id, filter.subscription_id,
                                filter.failed_only, since_param, filter.event_type)
                  .affected_rows();
    }
    transaction.commit();
  }));
  if (count == 0 && !filter.delivery_id.empty()) {
    return absl::NotFoundError("no such delivery");
  }
  return count;
}

absl::StatusOr<std::vector<ClaimedDelivery>> PgDeliveryStore::Claim(const std::string& owner,
                                                                    int limit,
                                                                    absl::Duration lease) {
  std::vector<ClaimedDelivery> claimed;
  RETURN_IF_ERROR(pool_.Run("claim_deliveries", [&](pqxx::connection& connection) {
    pqxx::work transaction(connection);
    std::vector<std::pair<int64_t, ClaimedDelivery>> rows;
    for (const pqxx::row& row :
         ExecPrepared(transaction, kClaim, owner, limit, absl::ToInt64Microseconds(lease))) {
      ClaimedDelivery delivery;
      delivery.id = row[0].as<std::string>();
      delivery.webhook_id = row[1].as<std::string>();
      delivery.event_type = row[2].as<std::string>();
      delivery.body = row[3].as<std::string>();
      delivery.attempts = row[4].as<int>();
      delivery.subscription_id = row[5].as<std::string>();
      delivery.url = row[6].as<std::string>();
      delivery.signature_version = row[7].as<std::string>();
      delivery.signing_key = absl::HexStringToBytes(row[8].as<std::string>());
      rows.emplace_back(row[9].as<int64_t>(), std::move(delivery));
    }
    transaction.commit();
    // In queue order (UPDATE … RETURNING has none).
    std::sort(rows.begin(), rows.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [seq, delivery] : rows) {
      claimed.push_back(std::move(delivery));
    }
  }));
  return claimed;
}

absl::StatusOr<int> PgDeliveryStore::RecordAttempts(const std::string& owner,
                                                    absl::Span<const AttemptRecord> attempts) {
  int recorded = 0;
  if (attempts.empty()) {
    return recorded;
  }
  RETURN_IF_ERROR(pool_.Run("record_delivery_attempts", [&](pqxx::connection& connection) {
    recorded = 0;
    pqxx::work transaction(connection);
    for (const AttemptRecord& attempt : attempts) {
      const bool mine =
          ExecPrepared(transaction, kRecord, attempt.delivery_id, owner, attempt.state,
                       absl::ToUnixMicros(attempt.next_attempt_at), attempt.status_code,
                       attempt.error, absl::ToInt64Milliseconds(attempt.latency))
              .affected_rows() == 1;
      if (mine && attempt.disable_reason.has_value()) {
        ExecPrepared(transaction, kDisable, attempt.subscription_id, *attempt.disable_reason);
      }
      recorded += mine ? 1 : 0;
    }
    transaction.commit();
  }));
  return recorded;
}

absl::StatusOr<DeliveryQueueStats> PgDeliveryStore::QueueStats(int64_t cap) {
  DeliveryQueueStats stats;
  RETURN_IF_ERROR(pool_.Run("delivery_queue_stats", [&](pqxx::connection& connection) {
    pqxx::nontransaction read(connection);
    const pqxx::row row = read.exec_params1(kStats, cap);
    stats.depth = row[0].as<int64_t>();
    stats.oldest_age = absl::Microseconds(row[1].as<int64_t>());
  }));
  return stats;
}

}  // namespace portcullis::verifier::store
