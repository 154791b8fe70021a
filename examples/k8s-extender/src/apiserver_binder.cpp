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
  if (!rec.where.bind_info.is_null())
    meta["annotations"] =
        json{{std::string(hived_bind_info_annotation), rec.where.bind_info.dump()}};
  return json{{"apiVersion", "v1"},
              {"kind", "Binding"},
              {"metadata", std::move(meta)},
              {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", rec.args.node}}}};
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

}  // namespace hetsched::k8s
