#include "ingest-gateway/src/http/respond.h"

#include "absl/time/clock.h"

namespace portcullis::gateway::http {

Respond Respond::ObservedAs(RouteObserver* observer, absl::string_view route) const {
  Respond observed = *this;
  observed.observer_ = observer;
  observed.route_ = route;
  observed.started_ = absl::Now();
  return observed;
}

void Respond::operator()(HttpResponse response) const {
  if (observer_ != nullptr) {
    observer_->OnResponse(route_, response, absl::Now() - started_);
  }
  if (function_) {
    function_(std::move(response));
  } else if (std::shared_ptr<ResponseTarget> target = target_.lock()) {
    target->Deliver(request_, std::move(response));
  }
}

}  // namespace portcullis::gateway::http
