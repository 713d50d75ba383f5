#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// RETURN_IF_ERROR(expr): returns the status of `expr` from the enclosing function when it is not OK.
#define RETURN_IF_ERROR(expr)                                       \
  do {                                                              \
    if (::absl::Status portcullis_status_ = (expr); !portcullis_status_.ok()) { \
      return portcullis_status_;                                    \
    }                                                               \
  } while (false)

#define PORTCULLIS_STATUS_CONCAT_INNER(a, b) a##b
#define PORTCULLIS_STATUS_CONCAT(a, b) PORTCULLIS_STATUS_CONCAT_INNER(a, b)

// ASSIGN_OR_RETURN(lhs, expr): evaluates the StatusOr `expr`; returns its status when not OK,
// otherwise moves its value into `lhs` (which may be a declaration: `auto x`).
#define ASSIGN_OR_RETURN(lhs, expr) \
  PORTCULLIS_ASSIGN_OR_RETURN_IMPL(PORTCULLIS_STATUS_CONCAT(portcullis_statusor_, __LINE__), lhs, expr)

#define PORTCULLIS_ASSIGN_OR_RETURN_IMPL(statusor, lhs, expr) \
  auto statusor = (expr);                                      \
  if (!statusor.ok()) {                                        \
    return std::move(statusor).status();                       \
  }                                                            \
  lhs = std::move(statusor).value()
