// SPDX-License-Identifier: MIT
// The scheduler extender logic: node screening, the pending-pod cache and the binding records.
#include "extender.hpp"

#include <fmt/format.h>

#include <utility>

#include "try_assign.hpp"

namespace hetsched::k8s {
namespace {

using json = nlohmann::json;

int status_of(errc code) {
  switch (code) {
    case errc::invalid_argument: return 400;
    case errc::not_found: return 404;
    case errc::already_exists:
    case errc::failed_precondition: return 409;
    case errc::out_of_range: return 400;
    case errc::internal: return 500;
  }
  return 500;
}

response error_response(const error& e) {
  return response{status_of(e.code), json{{"Error", e.message}}};
}

}  // namespace

extender::extender(std::unique_ptr<backend> b, extender_options opts)
    : backend_(std::move(b)), opts_(std::move(opts)) {}

result<std::vector<node_info>> extender::screen_nodes(
    const std::vector<node_info>& nodes, std::map<std::string, std::string>& unknown) const {
  std::vector<node_info> known;
  known.reserve(nodes.size());
  for (const auto& n : nodes) {
    if (backend_->knows_node(n.name)) {
      known.push_back(n);
      continue;
    }
    if (!opts_.tolerate_unknown_nodes)
      return make_error(errc::not_found, "unknown node {}: not in the {} cluster", n.name,
                        backend_->kind());
    unknown.insert_or_assign(n.name, fmt::format("node {} is not managed by hetsched", n.name));
  }
  return known;
}

std::size_t pod_footprint(const pod_info& pod) {
  // a map node with two std::string members, and the pod's index entries (hash node, deque slot)
  constexpr std::size_t entry_cost = 96;
  constexpr std::size_t pod_cost = 256;
  std::size_t n =
      sizeof(pod_info) + pod_cost + pod.name.size() + pod.name_space.size() + 2 * pod.uid.size();
  for (const auto& [k, v] : pod.annotations) n += entry_cost + k.size() + v.size();
  for (const auto& [k, v] : pod.node_selector) n += entry_cost + k.size() + v.size();
  return n;
}

void extender::erase_pending(std::unordered_map<std::string, pending_pod>::iterator it) {
  pending_bytes_ -= it->second.bytes;
  pending_.erase(it);
}

void extender::remember(const pod_info& pod) {
  auto it = pending_.find(pod.uid);
  const std::size_t bytes = pod_footprint(pod);
  if (it != pending_.end()) {
    pending_bytes_ = pending_bytes_ - it->second.bytes + bytes;
    it->second.pod = pod;
    it->second.bytes = bytes;
  } else {
    const std::uint64_t seq = ++seq_;
    pending_.emplace(pod.uid, pending_pod{pod, seq, bytes});
    pending_bytes_ += bytes;
    pending_order_.emplace_back(pod.uid, seq);
  }
  // Oldest first; the pod just remembered stays (pending_capacity_bytes exceeds a request).
  const std::uint64_t newest = pending_.at(pod.uid).seq;
  while (
      (pending_.size() > opts_.pending_capacity || pending_bytes_ > opts_.pending_capacity_bytes) &&
      !pending_order_.empty()) {
    auto [uid, s] = pending_order_.front();
    if (s == newest) break;
    pending_order_.pop_front();
    auto victim = pending_.find(uid);
    if (victim != pending_.end() && victim->second.seq == s) {
      backend_->forget(victim->second.pod);
      erase_pending(victim);
    }
  }
  // Entries of pods that were bound or released since are dropped lazily here.
  while (!pending_order_.empty()) {
    auto found = pending_.find(pending_order_.front().first);
    if (found != pending_.end() && found->second.seq == pending_order_.front().second) break;
    pending_order_.pop_front();
  }
}

result<filter_result> extender::filter(const extender_args& args) {
  std::lock_guard lock(mu_);
  ++counters_["filter"];
  std::map<std::string, std::string> unknown;
  K8S_TRY_ASSIGN(auto known, screen_nodes(args.nodes, unknown));
  if (bound_.count(args.pod.uid) != 0)
    return make_error(errc::already_exists, "pod {} (UID {}) is already bound", args.pod.name,
                      args.pod.uid);
  HETSCHED_TRY(backend_->check_pod(args.pod));
  const auto previous = backend_->observe_health(known);
  auto decided = backend_->filter(args.pod, known);
  if (!decided) {
    (void)backend_->observe_health(previous);
    return decided.error();
  }
  auto out = std::move(*decided);
  for (auto& [n, why] : unknown) out.failed_and_unresolvable.insert_or_assign(n, std::move(why));
  remember(args.pod);
  return out;
}

result<std::vector<host_priority>> extender::prioritize(const extender_args& args) {
  std::lock_guard lock(mu_);
  ++counters_["prioritize"];
  std::map<std::string, std::string> unknown;
  K8S_TRY_ASSIGN(auto known, screen_nodes(args.nodes, unknown));
  HETSCHED_TRY(backend_->check_pod(args.pod));
  const auto previous = backend_->observe_health(known);
  auto scored = backend_->prioritize(args.pod, known);
  if (!scored) {
    (void)backend_->observe_health(previous);
    return scored.error();
  }
  const auto scores = std::move(*scored);
  std::map<std::string, std::int64_t> by_node;
  for (const auto& h : scores) by_node.emplace(h.host, h.score);
  std::vector<host_priority> out;
  out.reserve(args.nodes.size());
  for (const auto& n : args.nodes) {
    auto it = by_node.find(n.name);
    out.push_back(host_priority{n.name, it == by_node.end() ? 0 : it->second});
  }
  if (bound_.count(args.pod.uid) == 0) remember(args.pod);
  return out;
}

result<preemption_result> extender::preempt(const preemption_args& args) {
  std::lock_guard lock(mu_);
  ++counters_["preempt"];
  for (const auto& [node, victims] : args.node_victims)
    if (!backend_->knows_node(node) && !opts_.tolerate_unknown_nodes)
      return make_error(errc::not_found, "unknown node {}: not in the {} cluster", node,
                        backend_->kind());
  if (bound_.count(args.pod.uid) != 0)
    return make_error(errc::already_exists, "pod {} (UID {}) is already bound", args.pod.name,
                      args.pod.uid);
  HETSCHED_TRY(backend_->check_pod(args.pod));
  std::map<std::string, meta_victims> candidates;
  for (const auto& [node, victims] : args.node_victims)
    if (backend_->knows_node(node)) candidates.emplace(node, victims);
  if (!args.node_victims.empty() && candidates.empty()) return preemption_result{};
  K8S_TRY_ASSIGN(auto out, backend_->preempt(args.pod, candidates));
  remember(args.pod);
  return out;
}

result<binding_record> extender::bind(const binding_args& args) {
  K8S_TRY_ASSIGN(auto rec, bind_locked(args));
  if (opts_.after_bind) {
    if (auto durable = opts_.after_bind(rec); !durable) {
      // Nobody was told of the bind yet: undo it (release() runs the release hooks).
      (void)release(args.pod_uid);
      return make_error(errc::failed_precondition, "binding pod {}/{} failed: {}",
                        args.pod_namespace, args.pod_name, durable.error().message);
    }
  }
  return rec;
}

result<binding_record> extender::bind_locked(const binding_args& args) {
  std::lock_guard lock(mu_);
  ++counters_["bind"];
  if (!backend_->knows_node(args.node))
    return make_error(errc::not_found, "unknown node {}: not in the {} cluster", args.node,
                      backend_->kind());
  if (auto it = bound_.find(args.pod_uid); it != bound_.end())
    return make_error(errc::already_exists, "pod {}/{} (UID {}) is already bound to {}",
                      args.pod_namespace, args.pod_name, args.pod_uid, it->second.where.node);
  auto pending = pending_.find(args.pod_uid);
  if (pending == pending_.end())
    return make_error(errc::not_found,
                      "pod {}/{} (UID {}) was never filtered by this extender (or was forgotten)",
                      args.pod_namespace, args.pod_name, args.pod_uid);
  const pod_info& pod = pending->second.pod;
  if (pod.name != args.pod_name || pod.name_space != args.pod_namespace)
    return make_error(errc::failed_precondition, "UID {} belongs to pod {}/{}, not {}/{}",
                      args.pod_uid, pod.name_space, pod.name, args.pod_namespace, args.pod_name);
  K8S_TRY_ASSIGN(auto where, backend_->bind(pod, args.node));
  binding_record rec{args, pod, std::move(where)};
  if (opts_.on_bind) {
    if (auto forwarded = opts_.on_bind(rec); !forwarded) {
      auto undone = backend_->release(pod, rec.where);
      (void)undone;
      return make_error(errc::failed_precondition, "binding pod {}/{} failed: {}",
                        args.pod_namespace, args.pod_name, forwarded.error().message);
    }
  }
  bound_.emplace(args.pod_uid, rec);
  erase_pending(pending);
  ++counters_["bound"];
  return rec;
}

result<void> extender::release(const std::string& pod_uid) {
  std::optional<binding_record> released;
  {
    std::lock_guard lock(mu_);
    ++counters_["release"];
    if (auto it = bound_.find(pod_uid); it != bound_.end()) {
      HETSCHED_TRY(backend_->release(it->second.pod, it->second.where));
      if (opts_.on_release) opts_.on_release(it->second);
      released = std::move(it->second);
      bound_.erase(it);
      ++counters_["released"];
    } else if (auto p = pending_.find(pod_uid); p != pending_.end()) {
      backend_->forget(p->second.pod);
      erase_pending(p);
      return {};
    } else {
      return make_error(errc::not_found, "no pod with UID {} is bound or pending", pod_uid);
    }
  }
  if (opts_.after_release) opts_.after_release(*released);
  return {};
}

std::vector<std::string> extender::restore(const std::vector<binding_record>& records) {
  std::lock_guard lock(mu_);
  std::vector<std::string> skipped;
  // (node, GPU) -> the UID holding it, over every binding so far
  std::map<std::pair<std::string, std::int64_t>, std::string> owner;
  for (const auto& [uid, rec] : bound_)
    for (auto g : rec.where.gpus) owner.emplace(std::pair{rec.where.node, g}, uid);
  for (const auto& rec : records) {
    const std::string who = fmt::format("pod {}/{} (UID {})", rec.args.pod_namespace,
                                        rec.args.pod_name, rec.args.pod_uid);
    if (auto it = bound_.find(rec.args.pod_uid); it != bound_.end()) {
      skipped.push_back(fmt::format("{} skipped: already bound to {}", who, it->second.where.node));
      continue;
    }
    if (!backend_->knows_node(rec.where.node)) {
      skipped.push_back(fmt::format("{} skipped: node {} is not in the {} cluster", who,
                                    rec.where.node, backend_->kind()));
      continue;
    }
    const std::string* holder = nullptr;
    std::int64_t held = 0;
    for (auto g : rec.where.gpus) {
      if (auto it = owner.find(std::pair{rec.where.node, g}); it != owner.end()) {
        holder = &it->second;
        held = g;
        break;
      }
    }
    if (holder != nullptr) {
      const auto& other = bound_.at(*holder).args;
      skipped.push_back(fmt::format(
          "{} skipped: GPU {} of {} is already held by pod {}/{} (UID {}); not double-booked", who,
          held, rec.where.node, other.pod_namespace, other.pod_name, other.pod_uid));
      continue;
    }
    if (auto restored = backend_->restore(rec.pod, rec.where); !restored) {
      skipped.push_back(fmt::format("{} skipped: {}", who, restored.error().message));
      continue;
    }
    for (auto g : rec.where.gpus) owner.emplace(std::pair{rec.where.node, g}, rec.args.pod_uid);
    if (auto p = pending_.find(rec.args.pod_uid); p != pending_.end()) erase_pending(p);
    bound_.emplace(rec.args.pod_uid, rec);
    ++counters_["restored"];
  }
  return skipped;
}

response extender::handle(std::string_view verb, const json& body) {
  if (verb == "filter") {
    auto args = decode_extender_args(body);
    if (!args) return error_response(args.error());
    auto r = filter(*args);
    if (!r) return error_response(r.error());
    return response{200, encode(*r, *args)};
  }
  if (verb == "prioritize") {
    auto args = decode_extender_args(body);
    if (!args) return error_response(args.error());
    auto r = prioritize(*args);
    if (!r) return error_response(r.error());
    return response{200, encode(*r)};
  }
  if (verb == "preempt") {
    auto args = decode_preemption_args(body);
    if (!args) return error_response(args.error());
    auto r = preempt(*args);
    if (!r) return error_response(r.error());
    return response{200, encode(*r)};
  }
  if (verb == "bind") {
    auto args = decode_binding_args(body);
    if (!args) return error_response(args.error());
    auto r = bind(*args);
    if (!r) {
      const int status = r.error().code == errc::not_found ? 404 : 200;
      return response{status, encode(binding_result{r.error().message})};
    }
    return response{200, encode(binding_result{})};
  }
  if (verb == "release") {
    const json* uid = find_key(body, "PodUID");
    if (uid == nullptr || !uid->is_string())
      return error_response(make_error(errc::invalid_argument, "release: missing PodUID"));
    auto r = release(uid->get<std::string>());
    if (!r) return error_response(r.error());
    return response{200, json{{"Error", ""}}};
  }
  return error_response(make_error(errc::not_found, "unknown verb {}", verb));
}

std::optional<binding_record> extender::binding(const std::string& pod_uid) const {
  std::lock_guard lock(mu_);
  auto it = bound_.find(pod_uid);
  if (it == bound_.end()) return std::nullopt;
  return it->second;
}

std::map<std::string, binding_record> extender::bindings() const {
  std::lock_guard lock(mu_);
  return bound_;
}

std::int64_t extender::used_gpus() const {
  std::lock_guard lock(mu_);
  return backend_->used_gpus();
}

std::int64_t extender::total_gpus() const {
  std::lock_guard lock(mu_);
  return backend_->total_gpus();
}

std::string_view extender::kind() const { return backend_->kind(); }

std::string extender::digest() const {
  std::lock_guard lock(mu_);
  std::string out;
  for (const auto& [uid, rec] : bound_) {
    out.append(uid).append("@").append(rec.where.node).append(":");
    for (auto g : rec.where.gpus) out.append(std::to_string(g)).append(",");
    out.append(";");
  }
  out.append("|pending:");
  std::map<std::string, std::uint64_t> pending_sorted;
  for (const auto& [uid, p] : pending_) pending_sorted.emplace(uid, p.seq);
  for (const auto& [uid, seq] : pending_sorted)
    out.append(uid).append("#").append(std::to_string(seq)).append(",");
  out.append("|").append(backend_->digest());
  return out;
}

std::size_t extender::pending_pods() const {
  std::lock_guard lock(mu_);
  return pending_.size();
}

std::size_t extender::pending_bytes() const {
  std::lock_guard lock(mu_);
  return pending_bytes_;
}

std::string extender::metrics() const {
  std::lock_guard lock(mu_);
  std::string out;
  out.append("# TYPE hetsched_extender_calls_total counter\n");
  for (const auto& [name, n] : counters_)
    out.append(fmt::format("hetsched_extender_calls_total{{kind=\"{}\"}} {}\n", name, n));
  out.append("# TYPE hetsched_extender_bound_pods gauge\n");
  out.append(fmt::format("hetsched_extender_bound_pods {}\n", bound_.size()));
  out.append("# TYPE hetsched_extender_pending_pods gauge\n");
  out.append(fmt::format("hetsched_extender_pending_pods {}\n", pending_.size()));
  out.append("# TYPE hetsched_extender_pending_bytes gauge\n");
  out.append(fmt::format("hetsched_extender_pending_bytes {}\n", pending_bytes_));
  out.append("# TYPE hetsched_extender_gpus gauge\n");
  out.append(fmt::format("hetsched_extender_gpus{{state=\"used\"}} {}\n", backend_->used_gpus()));
  out.append(fmt::format("hetsched_extender_gpus{{state=\"total\"}} {}\n", backend_->total_gpus()));
  return out;
}

}  // namespace hetsched::k8s
