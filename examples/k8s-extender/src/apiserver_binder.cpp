// SPDX-License-Identifier: MIT
// The API-server binder: v1 Binding objects posted with cpp-httplib's client.
#include "apiserver_binder.hpp"

#include <fmt/format.h>

#include <charconv>
#include <httplib.h>
#include <string_view>
#include <utility>

#include "backend.hpp"

namespace hetsched::k8s {
namespace {

using json = nlohmann::json;

/// Percent-encodes everything but RFC 3986's unreserved characters.
std::string path_segment(std::string_view s) {
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if ((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out.push_back(c);
    } else {
      out.append(fmt::format("%{:02X}", static_cast<unsigned>(u)));
    }
  }
  return out;
}

/// Returns the string member `key` of `obj`, or "" (never throws).
std::string text_of(const json& obj, const char* key) {
  const auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// Returns the API server's Status.message, else the start of the body.
std::string refusal_message(const std::string& body) {
  auto j = json::parse(body, nullptr, false);
  if (j.is_object()) {
    auto m = j.find("message");
    if (m != j.end() && m->is_string()) return m->get<std::string>();
  }
  constexpr std::size_t limit = 200;
  return body.size() <= limit ? body : body.substr(0, limit) + "...";
}

}  // namespace

json binding_object(const binding_record& rec) {
  json meta{{"name", rec.args.pod_name},
            {"namespace", rec.args.pod_namespace},
            {"uid", rec.args.pod_uid}};
  meta["annotations"] = json{{std::string(bind_info_annotation),
                              json{{"node", rec.where.node}, {"gpus", rec.where.gpus}}.dump()}};
  if (!rec.where.bind_info.is_null())
    meta["annotations"][std::string(hived_bind_info_annotation)] = rec.where.bind_info.dump();
  return json{{"apiVersion", "v1"},
              {"kind", "Binding"},
              {"metadata", std::move(meta)},
              {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", rec.args.node}}}};
}

result<std::optional<binding_record>> bound_pod_record(const json& pod) {
  if (!pod.is_object()) return make_error(errc::invalid_argument, "a pod that is not an object");
  const auto mit = pod.find("metadata");
  if (mit == pod.end() || !mit->is_object())
    return make_error(errc::invalid_argument, "a pod without metadata");
  const json* meta = &*mit;
  const std::string who =
      fmt::format("pod {}/{}", text_of(*meta, "namespace"), text_of(*meta, "name"));
  const json spec = pod.value("spec", json::object());
  const json node_name = spec.is_object() ? spec.value("nodeName", json()) : json();
  if (!node_name.is_string() || node_name.get_ref<const std::string&>().empty())
    return std::optional<binding_record>{};
  const json status = pod.value("status", json::object());
  const json phase = status.is_object() ? status.value("phase", json()) : json();
  if (phase == "Succeeded" || phase == "Failed") return std::optional<binding_record>{};
  const json annotations = meta->value("annotations", json::object());
  const auto ours = annotations.is_object() ? annotations.find(std::string(bind_info_annotation))
                                            : annotations.end();
  const auto hived = annotations.is_object()
                         ? annotations.find(std::string(hived_bind_info_annotation))
                         : annotations.end();
  if (ours == annotations.end() && hived == annotations.end())
    return std::optional<binding_record>{};
  auto decoded = decode_pod(pod);
  if (!decoded) return make_error(errc::invalid_argument, "{}: {}", who, decoded.error().message);
  binding_record rec;
  rec.pod = std::move(*decoded);
  rec.args =
      binding_args{rec.pod.name, rec.pod.name_space, rec.pod.uid, node_name.get<std::string>()};
  json where;
  if (hived != annotations.end()) {
    rec.where.bind_info = hived->is_string()
                              ? json::parse(hived->get<std::string>(), nullptr, false)
                              : json(json::value_t::discarded);
    if (rec.where.bind_info.is_discarded() || !rec.where.bind_info.is_object())
      return make_error(errc::invalid_argument, "{}: annotation {} is not a JSON object", who,
                        hived_bind_info_annotation);
    where = json{{"node", rec.where.bind_info.value("node", json())},
                 {"gpus", rec.where.bind_info.value("leafCellIsolation", json::array())}};
  }
  if (ours != annotations.end()) {
    where = ours->is_string() ? json::parse(ours->get<std::string>(), nullptr, false)
                              : json(json::value_t::discarded);
    if (where.is_discarded() || !where.is_object())
      return make_error(errc::invalid_argument, "{}: annotation {} is not a JSON object", who,
                        bind_info_annotation);
  }
  const json node = where.value("node", json());
  const json gpus = where.value("gpus", json());
  if (!node.is_string() || !gpus.is_array())
    return make_error(errc::invalid_argument, "{}: the bind info needs node and gpus", who);
  if (node != node_name)
    return make_error(errc::invalid_argument,
                      "{}: the bind info names node {}, spec.nodeName is {}", who,
                      node.get<std::string>(), node_name.get<std::string>());
  rec.where.node = node.get<std::string>();
  for (const auto& g : gpus) {
    if (!g.is_number_integer())
      return make_error(errc::invalid_argument, "{}: the bind info has a non-integer GPU", who);
    rec.where.gpus.push_back(g.get<std::int64_t>());
  }
  return std::optional<binding_record>{std::move(rec)};
}

std::string binding_path(const binding_args& args) {
  return fmt::format("/api/v1/namespaces/{}/pods/{}/binding", path_segment(args.pod_namespace),
                     path_segment(args.pod_name));
}

result<apiserver_binder> apiserver_binder::create(const std::string& url,
                                                  std::chrono::milliseconds timeout) {
  constexpr std::string_view scheme = "http://";
  std::string_view rest = url;
  if (rest.substr(0, 8) == "https://")
    return make_error(errc::invalid_argument,
                      "API server URL {}: https is not supported; run `kubectl proxy` (it handles "
                      "authentication and TLS) and pass its http://127.0.0.1:8001",
                      url);
  if (rest.substr(0, scheme.size()) != scheme)
    return make_error(errc::invalid_argument, "API server URL {}: must start with http://", url);
  rest.remove_prefix(scheme.size());
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find('/') != std::string_view::npos)
    return make_error(errc::invalid_argument, "API server URL {}: a path is not supported", url);
  std::string_view host = rest;
  int port = 80;
  if (const auto colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    const std::string_view digits = rest.substr(colon + 1);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size() || port < 1 ||
        port > 65535)
      return make_error(errc::invalid_argument, "API server URL {}: bad port '{}'", url, digits);
  }
  if (host.empty()) return make_error(errc::invalid_argument, "API server URL {}: no host", url);
  if (timeout.count() <= 0)
    return make_error(errc::invalid_argument, "API server timeout must be positive");
  return apiserver_binder(std::string(host), port, timeout);
}

result<void> apiserver_binder::bind(const binding_record& rec) const {
  httplib::Client client(host_, port_);
  client.set_connection_timeout(timeout_);
  client.set_read_timeout(timeout_);
  client.set_write_timeout(timeout_);
  const std::string path = binding_path(rec.args);
  auto res = client.Post(path.c_str(), binding_object(rec).dump(), "application/json");
  if (!res)
    return make_error(errc::failed_precondition, "API server unreachable at http://{}:{}: {}",
                      host_, port_, httplib::to_string(res.error()));
  if (res->status < 200 || res->status > 299)
    return make_error(errc::failed_precondition, "API server answered {} to POST {}: {}",
                      res->status, path, refusal_message(res->body));
  return {};
}

result<std::vector<binding_record>> apiserver_binder::bound_pods(
    std::vector<std::string>& skipped) const {
  httplib::Client client(host_, port_);
  client.set_connection_timeout(timeout_);
  client.set_read_timeout(timeout_);
  client.set_write_timeout(timeout_);
  std::vector<binding_record> out;
  std::string next;
  do {
    std::string path = "/api/v1/pods?fieldSelector=spec.nodeName%21%3D&limit=500";
    if (!next.empty()) path += "&continue=" + path_segment(next);
    auto res = client.Get(path.c_str());
    if (!res)
      return make_error(errc::failed_precondition, "API server unreachable at http://{}:{}: {}",
                        host_, port_, httplib::to_string(res.error()));
    if (res->status != 200)
      return make_error(errc::failed_precondition, "API server answered {} to GET {}: {}",
                        res->status, path, refusal_message(res->body));
    const json list = json::parse(res->body, nullptr, false);
    if (!list.is_object() || !list.contains("items") || !list["items"].is_array())
      return make_error(errc::failed_precondition, "GET {}: the answer is not a PodList", path);
    for (const auto& pod : list["items"]) {
      auto rec = bound_pod_record(pod);
      if (!rec) {
        skipped.push_back(fmt::format("{} skipped", rec.error().message));
      } else if (rec->has_value()) {
        out.push_back(std::move(**rec));
      }
    }
    const json meta = list.value("metadata", json::object());
    const json cont = meta.is_object() ? meta.value("continue", json()) : json();
    next = cont.is_string() ? cont.get<std::string>() : std::string();
  } while (!next.empty());
  return out;
}

}  // namespace hetsched::k8s
