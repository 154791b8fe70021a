// SPDX-License-Identifier: MIT
// hetsched-conform FILE...: runs conformance vector files and ends with "N passed, N failed".
// Exits 1 if any case failed or a file could not be read, 0 otherwise.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "conform.hpp"

namespace hetsched::conform {

void reporter::pass(std::string_view id, std::string_view detail) {
  ++passed_;
  fmt::print("PASS {}{}{}\n", id, detail.empty() ? "" : ": ", detail);
}

void reporter::fail(std::string_view id, std::string_view detail) {
  ++failed_;
  fmt::print("FAIL {}: {}\n", id, detail);
}

void reporter::skip(std::string_view id, std::string_view reason) {
  ++skipped_;
  fmt::print("SKIP {}: {}\n", id, reason);
}

std::vector<vector_case> list_cases(const detail::json_value& doc, std::string_view key,
                                    std::string_view family, reporter& out) {
  const auto* items = doc.find(key);
  if (items == nullptr || !items->is_array()) {
    out.fail(family, fmt::format("the file has no \"{}\" array", key));
    return {};
  }
  std::vector<vector_case> cases;
  for (const auto& item : items->as_array()) {
    auto text = [&](std::string_view member) -> std::string {
      const auto* v = item.is_object() ? item.find(member) : nullptr;
      return v != nullptr && v->is_string() ? v->as_string() : std::string();
    };
    std::string name = text("id");
    if (name.empty()) name = fmt::format("{}[{}]", key, cases.size());
    cases.push_back(vector_case{&item, std::move(name), text("kind")});
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

family detect_family(const detail::json_value& doc) {
  if (!doc.is_object()) return family::unknown;
  auto text = [&](std::string_view key) -> std::string_view {
    const auto* v = doc.find(key);
    return v != nullptr && v->is_string() ? std::string_view(v->as_string()) : std::string_view();
  };
  const auto starts = [](std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
  };
  if (text("family") == "fgd_replay" || starts(text("schema"), "fgd_replay")) return family::fgd;
  if (starts(text("schema"), "drf_capacity")) return family::drf_capacity;
  if (starts(text("schema"), "hived")) return family::hived;
  if (doc.find("topologies") != nullptr && doc.find("cases") != nullptr &&
      doc.find("scoring_model") != nullptr) {
    return family::gpuallocator;
  }
  return family::unknown;
}

}  // namespace hetsched::conform

int main(int argc, char** argv) {
  using namespace hetsched::conform;
  if (argc < 2) {
    std::fprintf(stderr, "usage: hetsched-conform FILE...\n");
    return 2;
  }
  reporter out;
  bool unreadable = false;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) {
      std::fprintf(stderr, "hetsched-conform: cannot read '%s'\n", argv[i]);
      unreadable = true;
      continue;
    }
    auto doc = hetsched::detail::parse_json(text.str());
    if (!doc) {
      std::fprintf(stderr, "hetsched-conform: %s: %s\n", argv[i], doc.error().message.c_str());
      unreadable = true;
      continue;
    }
    const family f = detect_family(*doc);
    fmt::print("# {} ({})\n", argv[i], to_string(f));
    switch (f) {
      case family::gpuallocator: run_gpuallocator(*doc, out); break;
      case family::drf_capacity: run_drf_capacity(*doc, out); break;
      case family::hived: run_hived(*doc, out); break;
      case family::fgd: run_fgd(*doc, out); break;
      case family::unknown:
        std::fprintf(stderr, "hetsched-conform: %s: unknown vector family\n", argv[i]);
        unreadable = true;
        break;
    }
  }
  fmt::print("{} passed, {} failed, {} skipped\n", out.passed(), out.failed(), out.skipped());
  return out.failed() > 0 || unreadable ? 1 : 0;
}
