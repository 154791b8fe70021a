// SPDX-License-Identifier: MIT
// parse_queue_tree_json: a queue tree document (capacity_tree_json.hpp) from JSON text.
#include <fmt/format.h>

#include <cmath>
#include <set>
#include <utility>

#include <hetsched/policies/capacity_placement.hpp>
#include <hetsched/policies/capacity_tree_json.hpp>

#include "jsonio/json.hpp"

namespace hetsched {
namespace {

using jsonio::json;
using jsonio::json_object_reader;
using jsonio::json_path;

/// Thousandths per unit of `resource` in the document: GPUs and cores are stored as milli.
std::int64_t scale_of(std::string_view resource) noexcept {
  return resource == "gpu" || resource == "cpu" ? 1000 : 1;
}

/// Reads the amount member `key` of a quota (a number of `resource`'s document unit).
result<std::optional<std::int64_t>> read_amount(json_object_reader& r, std::string_view key,
                                                std::string_view resource) {
  if (!r.contains(key)) return std::optional<std::int64_t>{};
  auto v = r.get_number(key);
  if (!v) return std::move(v).error();
  const std::string path = r.path_of(key);
  const std::int64_t scale = scale_of(resource);
  const double scaled = *v * static_cast<double>(scale);
  if (!std::isfinite(scaled) || scaled < 0)
    return make_error(errc::invalid_argument, "{}: {} is not a non-negative amount", path, *v);
  if (scaled > static_cast<double>(max_quota_amount))
    return make_error(errc::out_of_range, "{}: {} is above the largest amount ({} {})", path, *v,
                      max_quota_amount / scale, scale == 1 ? "units" : "whole units");
  const double rounded = std::round(scaled);
  if (std::fabs(scaled - rounded) > 1e-6)
    return make_error(errc::invalid_argument, "{}: {} is not a whole number of {}", path, *v,
                      scale == 1 ? "units" : "thousandths");
  return std::optional<std::int64_t>(static_cast<std::int64_t>(rounded));
}

result<quota_spec> read_quota(const json& value, const std::string& path) {
  auto r = json_object_reader::make(value, path);
  if (!r) return std::move(r).error();
  quota_spec q;
  auto flavor = r->get_string("flavor", "default");
  if (!flavor) return std::move(flavor).error();
  q.flavor = std::string(*flavor);
  auto resource = r->get_string("resource");
  if (!resource) return std::move(resource).error();
  q.resource = std::string(*resource);
  auto nominal = read_amount(*r, "nominal", q.resource);
  if (!nominal) return std::move(nominal).error();
  q.nominal = nominal->value_or(0);
  auto borrowing = read_amount(*r, "borrowing_limit", q.resource);
  if (!borrowing) return std::move(borrowing).error();
  q.borrowing_limit = *borrowing;
  auto lending = read_amount(*r, "lending_limit", q.resource);
  if (!lending) return std::move(lending).error();
  q.lending_limit = *lending;
  HETSCHED_TRY(r->finish());
  return q;
}

result<queue_order> read_order(std::string_view v, const std::string& path) {
  if (v == "strict_fifo") return queue_order::strict_fifo;
  if (v == "best_effort_fifo") return queue_order::best_effort_fifo;
  if (v == "strict_priority") return queue_order::strict_priority;
  if (v == "priority") return queue_order::priority;
  if (v == "drf") return queue_order::drf;
  return make_error(errc::invalid_argument,
                    "{}: '{}' is not strict_fifo, best_effort_fifo, strict_priority, priority or "
                    "drf",
                    path, v);
}

result<queue_preemption> read_preemption(json_object_reader& r) {
  queue_preemption p;
  auto within = r.get_string("within_queue", "never");
  if (!within) return std::move(within).error();
  if (*within == "never") {
    p.within_queue = within_queue_preemption::never;
  } else if (*within == "lower_priority") {
    p.within_queue = within_queue_preemption::lower_priority;
  } else if (*within == "lower_or_newer_equal_priority") {
    p.within_queue = within_queue_preemption::lower_or_newer_equal_priority;
  } else {
    return make_error(errc::invalid_argument,
                      "{}: '{}' is not never, lower_priority or lower_or_newer_equal_priority",
                      r.path_of("within_queue"), *within);
  }
  auto reclaim = r.get_string("reclaim_within_cohort", "never");
  if (!reclaim) return std::move(reclaim).error();
  if (*reclaim == "never") {
    p.reclaim = cohort_reclaim::never;
  } else if (*reclaim == "lower_priority") {
    p.reclaim = cohort_reclaim::lower_priority;
  } else if (*reclaim == "any") {
    p.reclaim = cohort_reclaim::any;
  } else {
    return make_error(errc::invalid_argument, "{}: '{}' is not never, lower_priority or any",
                      r.path_of("reclaim_within_cohort"), *reclaim);
  }
  auto borrow = r.get_optional_object("borrow_within_cohort");
  if (!borrow) return std::move(borrow).error();
  if (*borrow) {
    p.borrow.enabled = true;
    if ((*borrow)->contains("max_priority_threshold")) {
      auto t = (*borrow)->get_int("max_priority_threshold", INT32_MIN, INT32_MAX);
      if (!t) return std::move(t).error();
      p.borrow.max_priority_threshold = static_cast<std::int32_t>(*t);
    }
    HETSCHED_TRY((*borrow)->finish());
  }
  HETSCHED_TRY(r.finish());
  return p;
}

result<void> read_user_limit(json_object_reader& r, const std::string& queue,
                             queue_tree_document& doc, yarn_user_limit_spec& out) {
  auto mulp = r.get_int_or("minimum_user_limit_percent", 100, 1, 100);
  if (!mulp) return std::move(mulp).error();
  out.minimum_user_limit_percent = *mulp;
  if (r.contains("user_limit_factor")) {
    auto ulf = r.get_number("user_limit_factor");
    if (!ulf) return std::move(ulf).error();
    if (!(*ulf > 0 || *ulf == -1) || !std::isfinite(*ulf))
      return make_error(errc::invalid_argument, "{}: {} is not a positive number or -1",
                        r.path_of("user_limit_factor"), *ulf);
    out.user_limit_factor = *ulf;
  }
  auto weights = r.get_optional_members("user_weights");
  if (!weights) return std::move(weights).error();
  for (const auto& [tenant, w] : *weights) {
    const std::string path = json_path(r.path_of("user_weights"), tenant);
    auto x = jsonio::expect_number(w, path);
    if (!x) return std::move(x).error();
    if (!(*x > 0) || !std::isfinite(*x))
      return make_error(errc::invalid_argument, "{}: {} is not a positive weight", path, *x);
    doc.user_weight_names[queue][tenant] = *x;
  }
  return r.finish();
}

result<void> read_node(const json& value, const std::string& path, queue_tree_document& doc,
                       std::set<std::string, std::less<>>& listed) {
  auto r = json_object_reader::make(value, path);
  if (!r) return std::move(r).error();
  capacity_node_spec n;
  auto name = r->get_string("name");
  if (!name) return std::move(name).error();
  n.name = std::string(*name);
  auto parent = r->get_string("parent", "");
  if (!parent) return std::move(parent).error();
  n.parent = std::string(*parent);
  auto kind = r->get_string("kind", "queue");
  if (!kind) return std::move(kind).error();
  if (*kind != "queue" && *kind != "cohort")
    return make_error(errc::invalid_argument, "{}: '{}' is not queue or cohort", r->path_of("kind"),
                      *kind);
  n.kind = *kind == "queue" ? capacity_node_kind::queue : capacity_node_kind::cohort;
  const bool queue = n.kind == capacity_node_kind::queue;
  auto quotas = r->get_optional_array("quotas");
  if (!quotas) return std::move(quotas).error();
  for (std::size_t i = 0; i < quotas->size(); ++i) {
    auto q = read_quota((*quotas)[i], json_path(r->path_of("quotas"), i));
    if (!q) return std::move(q).error();
    n.quotas.push_back(std::move(*q));
  }
  if (r->contains("fair_weight")) {
    auto w = r->get_number("fair_weight");
    if (!w) return std::move(w).error();
    n.fair_weight = *w;
  }
  for (const std::string_view key : {"order", "preemption", "user_limit", "tenants"})
    if (!queue && r->contains(key))
      return make_error(errc::invalid_argument, "{}: a cohort has no {}", r->path_of(key), key);
  if (r->contains("order")) {
    auto o = r->get_string("order");
    if (!o) return std::move(o).error();
    auto order = read_order(*o, r->path_of("order"));
    if (!order) return std::move(order).error();
    n.order = *order;
  }
  auto pre = r->get_optional_object("preemption");
  if (!pre) return std::move(pre).error();
  if (*pre) {
    auto p = read_preemption(**pre);
    if (!p) return std::move(p).error();
    n.preemption = *p;
  }
  auto ul = r->get_optional_object("user_limit");
  if (!ul) return std::move(ul).error();
  if (*ul) {
    yarn_user_limit_spec spec;
    HETSCHED_TRY(read_user_limit(**ul, n.name, doc, spec));
    n.user_limit = std::move(spec);
  }
  auto tenants = r->get_optional_array("tenants");
  if (!tenants) return std::move(tenants).error();
  for (std::size_t i = 0; i < tenants->size(); ++i) {
    const std::string tpath = json_path(r->path_of("tenants"), i);
    auto t = jsonio::expect_string((*tenants)[i], tpath);
    if (!t) return std::move(t).error();
    if (!listed.emplace(*t).second)
      return make_error(errc::already_exists, "{}: tenant '{}' is listed by two queues", tpath, *t);
    doc.tenant_queue.emplace(std::string(*t), n.name);
  }
  HETSCHED_TRY(r->finish());
  doc.tree.nodes.push_back(std::move(n));
  return ok();
}

}  // namespace

result<queue_tree_document> parse_queue_tree_json(std::string_view text) {
  auto root = jsonio::parse_json(text);
  if (!root) return make_error(root.error().code, "queue tree: {}", root.error().message);
  auto fail = [](error e) { return make_error(e.code, "queue tree: {}", e.message); };
  auto r = json_object_reader::make(*root, "");
  if (!r) return fail(std::move(r).error());
  queue_tree_document doc;
  auto fair = r->get_bool("fair_sharing", false);
  if (!fair) return fail(std::move(fair).error());
  doc.fair_sharing = *fair;
  auto pre = r->get_bool("preemption", true);
  if (!pre) return fail(std::move(pre).error());
  doc.preemption = *pre;
  auto runtime = r->get_int_or("min_runtime_s", 0, 0, max_capacity_min_runtime_s);
  if (!runtime) return fail(std::move(runtime).error());
  doc.min_runtime_s = *runtime;
  auto def = r->get_string("default_queue", "");
  if (!def) return fail(std::move(def).error());
  doc.default_queue = std::string(*def);
  auto nodes = r->get_array("nodes");
  if (!nodes) return fail(std::move(nodes).error());
  if (nodes->size() > max_queue_tree_nodes)
    return make_error(errc::out_of_range, "queue tree: nodes: {} nodes, at most {}", nodes->size(),
                      max_queue_tree_nodes);
  std::set<std::string, std::less<>> listed;
  for (std::size_t i = 0; i < nodes->size(); ++i) {
    auto n = read_node((*nodes)[i], json_path("nodes", i), doc, listed);
    if (!n) return fail(std::move(n).error());
  }
  if (auto f = r->finish(); !f) return fail(std::move(f).error());
  auto tree = capacity_tree::build(doc.tree);
  if (!tree) return fail(std::move(tree).error());
  if (!doc.default_queue.empty()) {
    const auto q = tree->find(doc.default_queue);
    if (!q || !tree->is_queue(*q))
      return make_error(errc::not_found, "queue tree: default_queue: '{}' is not a queue",
                        doc.default_queue);
  }
  return doc;
}

}  // namespace hetsched
