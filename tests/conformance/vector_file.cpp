// SPDX-License-Identifier: MIT
// The runner's shared parts: the reporter, the case list, family detection and
// run_vector_text() (used by hetsched-conform and by tests/fuzz/conform_vector_fuzz.cpp).
#include <fmt/format.h>

#include <string>

#include "conform.hpp"

namespace hetsched::conform {

void reporter::pass(std::string_view id, std::string_view detail) {
  ++passed_;
  if (print_) fmt::print("PASS {}{}{}\n", id, detail.empty() ? "" : ": ", detail);
}

void reporter::fail(std::string_view id, std::string_view detail) {
  ++failed_;
  if (print_) fmt::print("FAIL {}: {}\n", id, detail);
}

void reporter::skip(std::string_view id, std::string_view reason) {
  ++skipped_;
  if (print_) fmt::print("SKIP {}: {}\n", id, reason);
}

void reporter::note(std::string_view text) const {
  if (print_) fmt::print("# {}\n", text);
}

std::vector<vector_case> list_cases(const vector_value& doc, std::string_view key,
                                    std::string_view family, reporter& out) {
  const vector_value items = doc.json().is_object() ? doc[key] : vector_value(doc.json(), "");
  if (!items.json().is_array()) {
    out.fail(family, fmt::format("the file has no \"{}\" array", key));
    return {};
  }
  std::vector<vector_case> cases;
  for (const vector_value& item : items.items()) {
    // A case that is not an object, or whose id or kind is not a string, still gets a name; its
    // runner then fails it naming the path.
    const auto text = [&](std::string_view member) -> std::string {
      const auto& v = jsonio::member(item.json(), member);
      return v.is_string() ? v.get_ref<const std::string&>() : std::string();
    };
    std::string name = text("id");
    if (name.empty()) name = fmt::format("{}[{}]", key, cases.size());
    cases.push_back(vector_case{item, std::move(name), text("kind")});
  }
  return cases;
}

std::string_view to_string(family f) noexcept {
  switch (f) {
    case family::gpuallocator: return "gpuallocator";
    case family::drf_capacity: return "drf_capacity";
    case family::hived: return "hived";
    case family::fgd: return "fgd";
    case family::unknown: break;
  }
  return "unknown";
}

family detect_family(const jsonio::json& doc) {
  if (!doc.is_object()) return family::unknown;
  auto text = [&](std::string_view key) -> std::string_view {
    const auto& v = jsonio::member(doc, key);
    return v.is_string() ? std::string_view(v.get_ref<const std::string&>()) : std::string_view();
  };
  const auto starts = [](std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
  };
  if (text("family") == "fgd_replay" || starts(text("schema"), "fgd_replay")) return family::fgd;
  if (starts(text("schema"), "drf_capacity")) return family::drf_capacity;
  if (starts(text("schema"), "hived")) return family::hived;
  if (doc.contains("topologies") && doc.contains("cases") && doc.contains("scoring_model")) {
    return family::gpuallocator;
  }
  return family::unknown;
}

result<family> run_vector_text(std::string_view text, std::string_view name, reporter& out) {
  auto parsed = jsonio::parse_json(text);
  if (!parsed) return std::move(parsed).error();
  const family f = detect_family(*parsed);
  out.note(fmt::format("{} ({})", name, to_string(f)));
  const vector_value doc(*parsed, "");
  run_guarded(out, to_string(f), [&] {
    switch (f) {
      case family::gpuallocator: run_gpuallocator(doc, out); break;
      case family::drf_capacity: run_drf_capacity(doc, out); break;
      case family::hived: run_hived(doc, out); break;
      case family::fgd: run_fgd(doc, out); break;
      case family::unknown: break;
    }
  });
  if (f == family::unknown) {
    return make_error(errc::invalid_argument,
                      "unknown vector family (no \"schema\" or \"family\" tag of gpuallocator, "
                      "drf_capacity, hived or fgd_replay, and not the gpuallocator shape)");
  }
  return f;
}

}  // namespace hetsched::conform
