#include "verifier-service/src/server/blocklist_rpc.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/logging/log.h"
#include "common/status/status_mapping.h"
#include "verifier-service/src/server/ingest_rpc.h"
#include "verifier-service/src/server/store_errors.h"
#include "verifier-service/src/server/verifier_service.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

constexpr char kBlockTokenPrefix[] = "b:";
constexpr char kNoBlocklist[] = "blocklist is not configured";
constexpr int kDefaultBlockPageSize = 100;

absl::StatusOr<std::string> ValidateSite(const std::string& site, absl::string_view field) {
  if (site.empty()) {
    return std::string();
  }
  absl::StatusOr<std::string> host = intake::NormalizeBlockValue(intake::BlockKind::kDomain, site);
  if (!host.ok() || absl::StartsWith(site, "*") || absl::StartsWith(site, ".")) {
    return absl::InvalidArgumentError(absl::StrCat(field, " is not a site domain"));
  }
  return *host;
}

}  // namespace

absl::StatusOr<store::BlockEntry> ValidateBlock(const v1::SourceBlock& block) {
  store::BlockEntry entry;
  absl::StatusOr<std::string> site = ValidateSite(block.site(), "block.site");
  if (!site.ok()) {
    return site.status();
  }
  entry.site = *site;
  switch (block.kind()) {
    case v1::BLOCK_KIND_DOMAIN:
      entry.kind = intake::BlockKind::kDomain;
      break;
    case v1::BLOCK_KIND_PREFIX:
      entry.kind = intake::BlockKind::kPrefix;
      break;
    default:
      return absl::InvalidArgumentError("block.kind must be BLOCK_KIND_DOMAIN or BLOCK_KIND_PREFIX");
  }
  absl::StatusOr<std::string> value = intake::NormalizeBlockValue(entry.kind, block.value());
  if (!value.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("block.value: ", value.status().message()));
  }
  entry.value = *std::move(value);
  return entry;
}

absl::StatusOr<BlockPage> ValidateBlockPage(const v1::ListBlocksRequest& request) {
  BlockPage page;
  absl::StatusOr<std::string> site = ValidateSite(request.site(), "site");
  if (!site.ok()) {
    return site.status();
  }
  page.site = *site;
  if (request.page_size() < 0 || request.page_size() > store::kMaxBlockPageSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_size must be from 1 to ", store::kMaxBlockPageSize, " (0: 100)"));
  }
  page.size = request.page_size() == 0 ? kDefaultBlockPageSize : request.page_size();
  if (!request.page_token().empty()) {
    std::string decoded;
    const absl::Status bad =
        absl::InvalidArgumentError("page_token is not a token from a previous page");
    if (request.page_token().size() > 4 * intake::kMaxBlockValueBytes ||
        !absl::WebSafeBase64Unescape(request.page_token(), &decoded) ||
        !absl::StartsWith(decoded, kBlockTokenPrefix)) {
      return bad;
    }
    decoded.erase(0, 2);
    const size_t newline = decoded.find('\n');
    if (newline == std::string::npos) {
      return bad;
    }
    page.after_kind = decoded.substr(0, newline);
    page.after_value = decoded.substr(newline + 1);
    if (page.after_kind != "DOMAIN" && page.after_kind != "PREFIX") {
      return bad;
    }
  }
  return page;
}

std::string BlockPageToken(const store::BlockEntry& last) {
  return absl::WebSafeBase64Escape(
      absl::StrCat(kBlockTokenPrefix, intake::BlockKindName(last.kind), "\n", last.value));
}

void ToProto(const store::BlockEntry& entry, v1::SourceBlock* out) {
  out->set_site(entry.site);
  out->set_kind(entry.kind == intake::BlockKind::kDomain ? v1::BLOCK_KIND_DOMAIN
                                                         : v1::BLOCK_KIND_PREFIX);
  out->set_value(entry.value);
}

void ToProto(const store::BlockRecord& record, v1::SourceBlock* out) {
  ToProto(record.entry, out);
  *out->mutable_created_at() = TimestampProto(record.created_at);
}

namespace {
// A bound token manages its sites' entries only; the global ones (site empty) need an unbound
// token.
absl::Status RequireBlockScope(const auth::Caller& caller, const std::string& site) {
  return site.empty() ? RequireUnbound(caller, "manage the global blocklist")
                      : RequireSite(caller, site);
}
}  // namespace

grpc::ServerUnaryReactor* VerifierService::AddBlock(grpc::CallbackServerContext* context,
                                                    const v1::AddBlockRequest* request,
                                                    v1::AddBlockResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::optional<auth::Caller> caller = Admit(context, reactor, kAdminAccess);
  if (!caller.has_value() || FinishIfUnconfigured(blocks_ != nullptr, kNoBlocklist, reactor)) {
    return reactor;
  }
  absl::StatusOr<store::BlockEntry> entry = ValidateBlock(request->block());
  if (!entry.ok()) {
    reactor->Finish(status::ToGrpcStatus(entry.status()));
    return reactor;
  }
  if (absl::Status status = RequireBlockScope(*caller, entry->site); !status.ok()) {
    reactor->Finish(status::ToGrpcStatus(status));
    return reactor;
  }
  RunOnPool("AddBlock", context, reactor,
            [this, response, entry = *std::move(entry),
             sites = std::move(caller->sites)]() -> absl::Status {
              absl::StatusOr<bool> created = blocks_->AddBlock(entry, sites);
              if (!created.ok()) {
                return Retryable(created.status());
              }
              ToProto(entry, response->mutable_block());
              response->set_created(*created);
              if (*created) {
                logging::Info("source block added site={} kind={} value={}",
                              entry.site.empty() ? "(global)" : entry.site,
                              intake::BlockKindName(entry.kind), entry.value);
              }
              return absl::OkStatus();
            });
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::ListBlocks(grpc::CallbackServerContext* context,
                                                      const v1::ListBlocksRequest* request,
                                                      v1::ListBlocksResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::optional<auth::Caller> caller = Admit(context, reactor, kAdminAccess);
  if (!caller.has_value() || FinishIfUnconfigured(blocks_ != nullptr, kNoBlocklist, reactor)) {
    return reactor;
  }
  absl::StatusOr<BlockPage> page = ValidateBlockPage(*request);
  if (!page.ok()) {
    reactor->Finish(status::ToGrpcStatus(page.status()));
    return reactor;
  }
  if (absl::Status status = RequireBlockScope(*caller, page->site); !status.ok()) {
    reactor->Finish(status::ToGrpcStatus(status));
    return reactor;
  }
  RunOnPool("ListBlocks", context, reactor,
            [this, response, page = *std::move(page),
             sites = std::move(caller->sites)]() -> absl::Status {
              // One more than asked for tells whether there is a next page.
              absl::StatusOr<std::vector<store::BlockRecord>> records =
                  blocks_->ListBlocks(page.site, page.after_kind, page.after_value,
                                      std::min(page.size + 1, store::kMaxBlockPageSize), sites);
              if (!records.ok()) {
                return Retryable(records.status());
              }
              const bool more = static_cast<int>(records->size()) > page.size;
              if (more) {
                records->resize(page.size);
              }
              for (const store::BlockRecord& record : *records) {
                ToProto(record, response->add_blocks());
              }
              if (more && !records->empty()) {
                response->set_next_page_token(BlockPageToken(records->back().entry));
              }
              return absl::OkStatus();
            });
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::RemoveBlock(grpc::CallbackServerContext* context,
                                                       const v1::RemoveBlockRequest* request,
                                                       v1::RemoveBlockResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::optional<auth::Caller> caller = Admit(context, reactor, kAdminAccess);
  if (!caller.has_value() || FinishIfUnconfigured(blocks_ != nullptr, kNoBlocklist, reactor)) {
    return reactor;
  }
  absl::StatusOr<store::BlockEntry> entry = ValidateBlock(request->block());
  if (!entry.ok()) {
    reactor->Finish(status::ToGrpcStatus(entry.status()));
    return reactor;
  }
  if (absl::Status status = RequireBlockScope(*caller, entry->site); !status.ok()) {
    reactor->Finish(status::ToGrpcStatus(status));
    return reactor;
  }
  RunOnPool("RemoveBlock", context, reactor,
            [this, response, entry = *std::move(entry),
             sites = std::move(caller->sites)]() -> absl::Status {
              absl::StatusOr<bool> removed = blocks_->RemoveBlock(entry, sites);
              if (!removed.ok()) {
                return Retryable(removed.status());
              }
              if (!*removed) {
                return absl::NotFoundError("no such block entry");
              }
              ToProto(entry, response->mutable_block());
              logging::Info("source block removed site={} kind={} value={}",
                            entry.site.empty() ? "(global)" : entry.site,
                            intake::BlockKindName(entry.kind), entry.value);
              return absl::OkStatus();
            });
  return reactor;
}

}  // namespace portcullis::verifier::server
