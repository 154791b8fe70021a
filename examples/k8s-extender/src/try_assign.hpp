// SPDX-License-Identifier: MIT
// K8S_TRY_ASSIGN: assigns the value of a result-valued expression or returns its error.
#pragma once

#include <utility>

#define K8S_CONCAT_INNER(a, b) a##b
#define K8S_CONCAT(a, b) K8S_CONCAT_INNER(a, b)
#define K8S_TRY_ASSIGN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                        \
  if (!tmp) return std::move(tmp).error();  \
  lhs = std::move(*tmp)
/// `lhs` may declare a variable (`auto x`) or name an existing one.
#define K8S_TRY_ASSIGN(lhs, expr) K8S_TRY_ASSIGN_IMPL(K8S_CONCAT(k8s_try_, __LINE__), lhs, expr)
