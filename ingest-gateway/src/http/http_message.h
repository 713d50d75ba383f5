#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "boost/json/value.hpp"

// Plain value types for one HTTP exchange. They carry no Beast types, so handlers read like
// functions from a request to a response and test without sockets.
namespace portcullis::gateway::http {

// Header fields in arrival order; names compare case-insensitively. Every name and value lives in
// one buffer: a request's fields cost two allocations, not two per field.
class HeaderMap {
 public:
  struct Field {
    absl::string_view name;
    absl::string_view value;
  };

  // Appends a field (a repeated name keeps every value).
  void Add(absl::string_view name, absl::string_view value);
  // Replaces every field named `name` with one field.
  void Set(absl::string_view name, absl::string_view value);
  // The first value of `name`, or nullopt.
  std::optional<absl::string_view> Get(absl::string_view name) const;
  bool Contains(absl::string_view name) const { return Get(name).has_value(); }

  // The fields in order, as views valid until the map changes.
  class Fields {
   public:
    class Iterator {
     public:
      Field operator*() const { return map_->FieldAt(index_); }
      Iterator& operator++() {
        ++index_;
        return *this;
      }
      bool operator!=(const Iterator& other) const { return index_ != other.index_; }

     private:
      friend class Fields;
      Iterator(const HeaderMap* map, size_t index) : map_(map), index_(index) {}
      const HeaderMap* map_;
      size_t index_;
    };
    Iterator begin() const { return Iterator(map_, 0); }
    Iterator end() const { return Iterator(map_, map_->spans_.size()); }
    size_t size() const { return map_->spans_.size(); }

   private:
    friend class HeaderMap;
    explicit Fields(const HeaderMap* map) : map_(map) {}
    const HeaderMap* map_;
  };
  Fields fields() const { return Fields(this); }

 private:
  // Offsets into bytes_, so that a copied or moved map stays valid.
  struct Span {
    uint32_t name_at;
    uint32_t name_size;
    uint32_t value_at;
    uint32_t value_size;
  };
  Field FieldAt(size_t index) const;

  std::string bytes_;
  std::vector<Span> spans_;
};

// One request as the server read it.
struct HttpRequest {
  std::string method;  // "GET", "POST", ... exactly as sent.
  std::string path;    // The request target before '?', not percent-decoded.
  std::string query;   // After '?', without it; empty when absent.
  HeaderMap headers;
  std::string body;
  std::string client_address;  // "ip:port" of the peer.
  std::string request_id;      // Echoed in X-Request-Id; prefix of request-scoped log lines.
  // For routes with a trailing parameter (`/webmention/status/{id}`): the segment. Set by Router.
  std::string path_param;
};

// One response to send.
struct HttpResponse {
  int status = 200;
  HeaderMap headers;
  std::string body;
};

inline constexpr char kJsonContentType[] = "application/json";

// `value` serialized as the body, Content-Type application/json.
HttpResponse JsonResponse(int status, const boost::json::value& value);

// The one error body shape: {"error": <code>, "error_description": <human text>}.
HttpResponse JsonError(int status, absl::string_view error, absl::string_view description);

// True when `id` is an acceptable incoming X-Request-Id: 1 to 64 characters of [A-Za-z0-9._-].
bool IsAcceptableRequestId(absl::string_view id);

}  // namespace portcullis::gateway::http
