#include "tools/portcullis/src/mention_transfer_commands.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <utility>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "boost/json.hpp"
#include "google/protobuf/util/json_util.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "tools/portcullis/src/rpc_output.h"

namespace portcullis::cli {
namespace {

namespace v1 = portcullis::verifier::v1;
namespace json = boost::json;

// Largest import file read (a site's history; a webmention.io export of 100,000 mentions is
// about 100 MiB).
constexpr size_t kMaxImportFileBytes = size_t{512} << 20;
// Mentions per ExportMentions / ImportMentions call.
constexpr int kExportPage = 500;
constexpr int kImportBatch = 200;
// A guard against a server that never ends.
constexpr int kMaxExportPages = 100000;

int TransferUsageError(const std::string& why, std::ostream& err) {
  err << "error: " << why << "\n" << MentionTransferUsage();
  return kExitUsage;
}

std::string StringAt(const json::object& object, const char* key) {
  const json::value* value = object.if_contains(key);
  return value != nullptr && value->is_string() ? std::string(value->as_string()) : std::string();
}

v1::MentionType TypeOfProperty(const std::string& property) {
  if (property == "in-reply-to") return v1::MENTION_TYPE_REPLY;
  if (property == "like-of") return v1::MENTION_TYPE_LIKE;
  if (property == "repost-of") return v1::MENTION_TYPE_REPOST;
  if (property == "bookmark-of") return v1::MENTION_TYPE_BOOKMARK;
  if (property == "rsvp") return v1::MENTION_TYPE_RSVP;
  return v1::MENTION_TYPE_MENTION;
}

absl::StatusOr<v1::Mention> MentionOfEntry(const json::object& entry) {
  v1::Mention mention;
  mention.set_source(StringAt(entry, "wm-source"));
  mention.set_target(StringAt(entry, "wm-target"));
  if (mention.source().empty() || mention.target().empty()) {
    return absl::InvalidArgumentError("an entry has no wm-source or wm-target");
  }
  absl::Time received;
  std::string error;
  const std::string received_text = StringAt(entry, "wm-received");
  if (!absl::ParseTime(absl::RFC3339_full, received_text, &received, &error)) {
    return absl::InvalidArgumentError(
        absl::StrCat("an entry's wm-received is not an RFC 3339 time: '", received_text, "'"));
  }
  const absl::Time whole_seconds = absl::FromUnixSeconds(absl::ToUnixSeconds(received));
  mention.mutable_created_at()->set_seconds(absl::ToUnixSeconds(received));
  mention.mutable_created_at()->set_nanos(
      static_cast<int32_t>(absl::ToInt64Nanoseconds(received - whole_seconds)));
  mention.set_state(v1::MENTION_STATE_VERIFIED);
  mention.set_type(TypeOfProperty(StringAt(entry, "wm-property")));
  mention.set_rsvp(StringAt(entry, "rsvp"));
  if (const json::value* author = entry.if_contains("author"); author && author->is_object()) {
    mention.mutable_author()->set_name(StringAt(author->as_object(), "name"));
    mention.mutable_author()->set_url(StringAt(author->as_object(), "url"));
    mention.mutable_author()->set_photo(StringAt(author->as_object(), "photo"));
  }
  mention.set_url(StringAt(entry, "url"));
  mention.set_published(StringAt(entry, "published"));
  mention.set_name(StringAt(entry, "name"));
  if (const json::value* content = entry.if_contains("content"); content && content->is_object()) {
    mention.set_content_text(StringAt(content->as_object(), "text"));
    mention.set_content_html(StringAt(content->as_object(), "html"));
  }
  return mention;
}

}  // namespace

std::string MentionTransferUsage() {
  return "  export --site DOMAIN           every mention of a site, one JSON object a line\n"
         "  import FILE [--format=portcullis|webmention-io] [--reverify]\n"
         "                                 store an export, or webmention.io's\n"
         "                                 /api/mentions.jf2 pages; a pair already stored is\n"
         "                                 left as it is; --reverify verifies new pairs again\n";
}

absl::StatusOr<std::vector<v1::Mention>> ReadPortcullisExport(std::istream& in) {
  std::vector<v1::Mention> mentions;
  std::string line;
  google::protobuf::util::JsonParseOptions parse;
  parse.ignore_unknown_fields = true;
  for (int number = 1; std::getline(in, line); ++number) {
    if (absl::StripAsciiWhitespace(line).empty()) {
      continue;
    }
    v1::Mention mention;
    if (!google::protobuf::util::JsonStringToMessage(line, &mention, parse).ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", number, " is not a mention of a portcullis export"));
    }
    mentions.push_back(std::move(mention));
  }
  return mentions;
}

absl::StatusOr<std::vector<v1::Mention>> ReadWebmentionIoFeeds(std::istream& in) {
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<v1::Mention> mentions;
  json::stream_parser parser;
  size_t offset = 0;
  while (true) {
    while (offset < text.size() && absl::ascii_isspace(static_cast<unsigned char>(text[offset]))) {
      ++offset;
    }
    if (offset == text.size()) {
      break;
    }
    parser.reset();
    boost::system::error_code error;
    const size_t used = parser.write_some(text.data() + offset, text.size() - offset, error);
    if (!error && !parser.done()) {
      parser.finish(error);
    }
    if (error || !parser.done()) {
      return absl::InvalidArgumentError(
          absl::StrCat("not JSON at byte ", offset, " (expected a jf2 feed)"));
    }
    offset += used;
    const json::value feed = parser.release();
    const json::value* children =
        feed.is_object() ? feed.as_object().if_contains("children") : nullptr;
    if (children == nullptr || !children->is_array()) {
      return absl::InvalidArgumentError("a document is not a jf2 feed (no children)");
    }
    for (const json::value& child : children->as_array()) {
      if (!child.is_object()) {
        return absl::InvalidArgumentError("a feed child is not an object");
      }
      const json::value* is_private = child.as_object().if_contains("wm-private");
      if (is_private != nullptr && is_private->is_bool() && is_private->as_bool()) {
        continue;
      }
      absl::StatusOr<v1::Mention> mention = MentionOfEntry(child.as_object());
      if (!mention.ok()) {
        return mention.status();
      }
      mentions.push_back(*std::move(mention));
    }
  }
  return mentions;
}

int RunExportCommand(const std::vector<std::string>& args, const CliOptions& options,
                     std::ostream& out, std::ostream& err) {
  if (args.size() != 1 || options.list_site.empty()) {
    return TransferUsageError("'export' takes --site DOMAIN and nothing else", err);
  }
  auto channel = DialVerifier(options, err);
  if (channel == nullptr) {
    return kExitUsage;
  }
  auto stub = v1::Verifier::NewStub(channel);
  v1::ExportMentionsRequest request;
  request.set_domain(options.list_site);
  request.set_limit(kExportPage);
  google::protobuf::util::JsonPrintOptions print;
  print.preserve_proto_field_names = true;
  for (int page = 0; page < kMaxExportPages; ++page) {
    v1::ExportMentionsResponse response;
    if (const grpc::Status status = CallWithDeadline(
            *stub, &v1::Verifier::StubInterface::ExportMentions, options.timeout, request,
            &response);
        !status.ok()) {
      return ReportRpcError(status, err);
    }
    for (const v1::Mention& mention : response.mentions()) {
      std::string line;
      if (!google::protobuf::util::MessageToJsonString(mention, &line, print).ok()) {
        err << "error: a mention could not be written as JSON\n";
        return kExitFailed;
      }
      out << line << "\n";
      request.set_after_wm_id(mention.wm_id());
    }
    if (response.mentions_size() < kExportPage) {
      return out.good() ? kExitOk : kExitFailed;
    }
  }
  err << "error: the export did not end\n";
  return kExitFailed;
}

int RunImportCommand(const std::vector<std::string>& args, const CliOptions& options,
                     std::ostream& out, std::ostream& err) {
  if (args.size() != 2) {
    return TransferUsageError("'import' takes one FILE", err);
  }
  const std::string format = options.import_format.empty() ? "portcullis" : options.import_format;
  if (format != "portcullis" && format != "webmention-io") {
    return TransferUsageError("--format is portcullis or webmention-io", err);
  }
  std::ifstream file(args[1], std::ios::binary);
  if (!file) {
    err << "error: cannot read " << args[1] << "\n";
    return kExitUsage;
  }
  file.seekg(0, std::ios::end);
  if (static_cast<size_t>(file.tellg()) > kMaxImportFileBytes) {
    err << "error: " << args[1] << " is larger than " << (kMaxImportFileBytes >> 20)
        << " MiB; split it\n";
    return kExitUsage;
  }
  file.seekg(0);
  absl::StatusOr<std::vector<v1::Mention>> mentions =
      format == "portcullis" ? ReadPortcullisExport(file) : ReadWebmentionIoFeeds(file);
  if (!mentions.ok()) {
    err << "error: " << args[1] << ": " << mentions.status().message() << "\n";
    return kExitUsage;
  }
  // New pairs get their numeric ids in the order they are stored: received order, so that the
  // ids follow wm-received as they do for mentions received here.
  std::stable_sort(mentions->begin(), mentions->end(), [](const v1::Mention& a, const v1::Mention& b) {
    return std::make_pair(a.created_at().seconds(), a.created_at().nanos()) <
           std::make_pair(b.created_at().seconds(), b.created_at().nanos());
  });
  auto channel = DialVerifier(options, err);
  if (channel == nullptr) {
    return kExitUsage;
  }
  auto stub = v1::Verifier::NewStub(channel);
  v1::ImportMentionsResponse total;
  for (size_t start = 0; start < mentions->size(); start += kImportBatch) {
    v1::ImportMentionsRequest request;
    request.set_reverify(options.reverify);
    for (size_t i = start; i < std::min(mentions->size(), start + kImportBatch); ++i) {
      *request.add_mentions() = (*mentions)[i];
    }
    v1::ImportMentionsResponse response;
    if (const grpc::Status status =
            CallWithDeadline(*stub, &v1::Verifier::StubInterface::ImportMentions, options.timeout,
                             request, &response);
        !status.ok()) {
      err << "error: after " << start << " of " << mentions->size() << " mentions (importing "
          << "again is safe: pairs already stored are left as they are)\n";
      return ReportRpcError(status, err);
    }
    total.set_created(total.created() + response.created());
    total.set_unchanged(total.unchanged() + response.unchanged());
    total.set_rejected(total.rejected() + response.rejected());
  }
  return PrintJson(total, out, err);
}

}  // namespace portcullis::cli
