#include "verifier-service/src/server/blocklist_rpcs.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"
#include "verifier-service/src/server/authorized_call.h"
#include "verifier-service/src/server/unary_rpc.h"
#include "verifier-service/src/server/verifier_service.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

constexpr char kBlockTokenPrefix[] = "b:";
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

template <typename Request>
absl::StatusOr<store::BlockEntry> OwnBlock(const Request& request, const auth::Caller& caller) {
  ASSIGN_OR_RETURN(store::BlockEntry entry, ValidateBlock(request.block()));
  RETURN_IF_ERROR(RequireBlockScope(caller, entry.site));
  return entry;
}

std::string Site(const store::BlockEntry& entry) {
  return entry.site.empty() ? "(global)" : entry.site;
}

}  // namespace

absl::StatusOr<store::BlockEntry> ValidateBlock(const v1::AddBlockRequest& request,
                                                const auth::Caller& caller) {
  return OwnBlock(request, caller);
}

absl::StatusOr<store::BlockEntry> ValidateBlock(const v1::RemoveBlockRequest& request,
                                                const auth::Caller& caller) {
  return OwnBlock(request, caller);
}

absl::StatusOr<BlockPage> ValidateBlockPage(const v1::ListBlocksRequest& request,
                                            const auth::Caller& caller) {
  ASSIGN_OR_RETURN(BlockPage page, ValidateBlockPage(request));
  RETURN_IF_ERROR(RequireBlockScope(caller, page.site));
  return page;
}

PORTCULLIS_VERIFIER_RPC(AddBlock) {
  return rpcs_.Serve(
      "AddBlock", context, request, response, kAdminAccess,
      [](const v1::AddBlockRequest& request, const auth::Caller& caller) {
        return ValidateBlock(request, caller);
      },
      OnPool(*deps_.pool,
             [this, response](store::BlockEntry entry, const RpcCall& call) -> absl::Status {
               ASSIGN_OR_RETURN(bool created, deps_.blocks->AddBlock(entry, call.sites()));
               ToProto(entry, response->mutable_block());
               response->set_created(created);
               if (created) {
                 call.Info("source block added site={} kind={} value={}", Site(entry),
                           intake::BlockKindName(entry.kind), entry.value);
               }
               return absl::OkStatus();
             }));
}

PORTCULLIS_VERIFIER_RPC(ListBlocks) {
  return rpcs_.Serve(
      "ListBlocks", context, request, response, kAdminAccess,
      [](const v1::ListBlocksRequest& request, const auth::Caller& caller) {
        return ValidateBlockPage(request, caller);
      },
      OnPool(*deps_.pool,
             [this, response](BlockPage page, const RpcCall& call) {
               return ListPage(
                   page.size,
                   [&](int limit) {
                     return deps_.blocks->ListBlocks(page.site, page.after_kind, page.after_value,
                                                     std::min(limit, store::kMaxBlockPageSize),
                                                     call.sites());
                   },
                   [](const store::BlockRecord& last) { return BlockPageToken(last.entry); },
                   [&](const store::BlockRecord& record) { ToProto(record, response->add_blocks()); },
                   response->mutable_next_page_token());
             }));
}

PORTCULLIS_VERIFIER_RPC(RemoveBlock) {
  return rpcs_.Serve(
      "RemoveBlock", context, request, response, kAdminAccess,
      [](const v1::RemoveBlockRequest& request, const auth::Caller& caller) {
        return ValidateBlock(request, caller);
      },
      OnPool(*deps_.pool,
             [this, response](store::BlockEntry entry, const RpcCall& call) -> absl::Status {
               ASSIGN_OR_RETURN(bool removed, deps_.blocks->RemoveBlock(entry, call.sites()));
               if (!removed) {
                 return absl::NotFoundError("no such block entry");
               }
               ToProto(entry, response->mutable_block());
               call.Info("source block removed site={} kind={} value={}", Site(entry),
                         intake::BlockKindName(entry.kind), entry.value);
               return absl::OkStatus();
             }));
}

}  // namespace portcullis::verifier::server
