#include "tools/portcullis/src/publisher_commands.h"

#include "tools/portcullis/src/cli.h"
#include "tools/portcullis/src/rpc_output.h"

namespace portcullis::cli {
namespace {

namespace v1 = verifier::v1;
using Stub = v1::Verifier::StubInterface;

// One call with the deadline; prints the answer or the error line.
template <typename Method, typename Request, typename Response>
int CallAndPrint(Stub& stub, Method method, absl::Duration timeout, const Request& request,
                 Response* response, std::ostream& out, std::ostream& err) {
  if (const grpc::Status status = CallWithDeadline(stub, method, timeout, request, response);
      !status.ok()) {
    return ReportRpcError(status, err);
  }
  return PrintJson(*response, out, err);
}

}  // namespace

int AddPublisher(Stub& stub, absl::Duration timeout, const std::string& name,
                 const PublisherSettings& settings, std::ostream& out, std::ostream& err) {
  if (settings.retention < absl::ZeroDuration() ||
      settings.retention != absl::Trunc(settings.retention, absl::Seconds(1))) {
    err << "error: --retention must be whole seconds, at least 0 (0: the server default)\n";
    return kExitUsage;
  }
  v1::AddPublisherRequest request;
  v1::Publisher* publisher = request.mutable_publisher();
  publisher->set_name(name);
  publisher->set_verified(settings.verified);
  publisher->set_require_signature(settings.require_signature);
  publisher->set_retention_seconds(absl::ToInt64Seconds(settings.retention));
  publisher->set_keep_drops_seconds(absl::ToInt64Seconds(settings.keep_drops));
  publisher->set_require_c2pa_for_media(settings.require_c2pa_for_media);
  publisher->set_c2pa_trust(settings.c2pa_trust);
  v1::AddPublisherResponse response;
  return CallAndPrint(stub, &Stub::AddPublisher, timeout, request, &response, out, err);
}

int UpdatePublisher(Stub& stub, absl::Duration timeout, const std::string& name,
                    const PublisherChange& change, std::ostream& out, std::ostream& err) {
  v1::UpdatePublisherRequest request;
  request.set_name(name);
  if (change.keep_drops.has_value()) {
    request.set_keep_drops_seconds(absl::ToInt64Seconds(*change.keep_drops));
  }
  if (change.require_c2pa_for_media.has_value()) {
    request.set_require_c2pa_for_media(*change.require_c2pa_for_media);
  }
  if (change.c2pa_trust.has_value()) {
    request.set_c2pa_trust(*change.c2pa_trust);
  }
  v1::UpdatePublisherResponse response;
  return CallAndPrint(stub, &Stub::UpdatePublisher, timeout, request, &response, out, err);
}

int ListPublishers(Stub& stub, absl::Duration timeout, std::ostream& out, std::ostream& err) {
  v1::ListPublishersResponse all;
  v1::ListPublishersRequest request;
  request.set_page_size(1000);
  for (int page_count = 0; page_count < kMaxListPages; ++page_count) {
    v1::ListPublishersResponse page;
    if (const grpc::Status status =
            CallWithDeadline(stub, &Stub::ListPublishers, timeout, request, &page);
        !status.ok()) {
      return ReportRpcError(status, err);
    }
    all.mutable_publishers()->MergeFrom(page.publishers());
    if (page.next_page_token().empty()) {
      break;
    }
    request.set_page_token(page.next_page_token());
  }
  return PrintJson(all, out, err);
}

int SetPublisherEnabled(Stub& stub, absl::Duration timeout, const std::string& name, bool enabled,
                        std::ostream& out, std::ostream& err) {
  v1::SetPublisherEnabledRequest request;
  request.set_name(name);
  request.set_enabled(enabled);
  v1::SetPublisherEnabledResponse response;
  return CallAndPrint(stub, &Stub::SetPublisherEnabled, timeout, request, &response, out, err);
}

int AddPublisherKey(Stub& stub, absl::Duration timeout, const std::string& name,
                    const std::string& key, std::ostream& out, std::ostream& err) {
  v1::AddPublisherKeyRequest request;
  request.set_publisher(name);
  request.set_key(key);
  v1::AddPublisherKeyResponse response;
  return CallAndPrint(stub, &Stub::AddPublisherKey, timeout, request, &response, out, err);
}

int RevokePublisherKey(Stub& stub, absl::Duration timeout, const std::string& name,
                       const std::string& key_id, std::ostream& out, std::ostream& err) {
  v1::RevokePublisherKeyRequest request;
  request.set_publisher(name);
  request.set_key_id(key_id);
  v1::RevokePublisherKeyResponse response;
  return CallAndPrint(stub, &Stub::RevokePublisherKey, timeout, request, &response, out, err);
}

int ListDeadLetters(Stub& stub, absl::Duration timeout, const std::string& publisher,
                    std::ostream& out, std::ostream& err) {
  v1::ListDeadLettersResponse all;
  v1::ListDeadLettersRequest request;
  request.set_publisher(publisher);
  request.set_page_size(1000);
  for (int page_count = 0; page_count < kMaxListPages; ++page_count) {
    v1::ListDeadLettersResponse page;
    if (const grpc::Status status =
            CallWithDeadline(stub, &Stub::ListDeadLetters, timeout, request, &page);
        !status.ok()) {
      return ReportRpcError(status, err);
    }
    all.mutable_dead_letters()->MergeFrom(page.dead_letters());
    if (page.next_page_token().empty()) {
      break;
    }
    request.set_page_token(page.next_page_token());
  }
  return PrintJson(all, out, err);
}

int ReplayDeadLetter(Stub& stub, absl::Duration timeout, const std::string& id, std::ostream& out,
                     std::ostream& err) {
  v1::ReplayDeadLetterRequest request;
  request.set_dead_letter_id(id);
  v1::ReplayDeadLetterResponse response;
  return CallAndPrint(stub, &Stub::ReplayDeadLetter, timeout, request, &response, out, err);
}

int DiscardDeadLetter(Stub& stub, absl::Duration timeout, const std::string& id,
                      std::ostream& out, std::ostream& err) {
  v1::DiscardDeadLetterRequest request;
  request.set_dead_letter_id(id);
  v1::DiscardDeadLetterResponse response;
  return CallAndPrint(stub, &Stub::DiscardDeadLetter, timeout, request, &response, out, err);
}

int ListAcceptedItems(Stub& stub, absl::Duration timeout, int64_t after, int32_t limit,
                      std::ostream& out, std::ostream& err) {
  if (after < 0 || limit < 0 || limit > 1000) {
    err << "error: --after must be at least 0 and --limit 0 to 1000 (0: the server default)\n";
    return kExitUsage;
  }
  v1::ListAcceptedItemsRequest request;
  request.set_after_cursor(after);
  request.set_limit(limit);
  v1::ListAcceptedItemsResponse response;
  return CallAndPrint(stub, &Stub::ListAcceptedItems, timeout, request, &response, out, err);
}

}  // namespace portcullis::cli
