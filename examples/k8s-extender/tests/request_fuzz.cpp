// SPDX-License-Identifier: MIT
// libFuzzer target for the extender's request handling: arbitrary bytes as the body of filter,
// prioritize, preempt, bind or release on a packer and a HiveD extender. Input layout: byte 0
// picks the verb, bit 0 of byte 1 the backend, the rest is the body text; with bit 1 of byte 1
// set, the rest is instead the HiveD pod-scheduling-spec annotation (YAML or JSON) of a fixed
// pod (tests/data/hived_filter.json), sent to the verb on both candidate nodes; bit 2 of byte 1
// then picks the HiveD extender with options::cell_type_requests (test::hived_rows_cluster, the
// v2 fields cellType / withinOneCell / childGroups accepted) instead. Checks that the
// handler never crashes, answers with a 2xx or 4xx status, and changes no state when it answers
// 4xx.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "extender.hpp"
#include "fixtures.hpp"

#include <nlohmann/json.hpp>

namespace {

// A small pending-pod cache keeps digest() cheap and exercises the eviction path (forget).
hetsched::k8s::extender_options fuzz_options() {
  hetsched::k8s::extender_options opts;
  opts.pending_capacity = 256;
  return opts;
}

hetsched::k8s::extender& extender_for(std::uint8_t which) {
  static auto packer = std::make_unique<hetsched::k8s::extender>(
      hetsched::k8s::test::packer_cluster(), fuzz_options());
  static auto hived = std::make_unique<hetsched::k8s::extender>(
      hetsched::k8s::test::hived_cluster(), fuzz_options());
  static auto rows = std::make_unique<hetsched::k8s::extender>(
      hetsched::k8s::test::hived_rows_cluster(), fuzz_options());
  if ((which & 4U) != 0) return *rows;
  return (which & 1U) != 0 ? *hived : *packer;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  static constexpr std::string_view verbs[] = {"filter", "prioritize", "preempt", "bind",
                                               "release"};
  const std::string_view verb = verbs[data[0] % 5];
  const bool annotation_mode = (data[1] & 2U) != 0;
  auto& ext =
      extender_for(annotation_mode ? static_cast<std::uint8_t>(1U | (data[1] & 4U)) : data[1]);
  const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);
  nlohmann::json body;
  if (annotation_mode) {
    // An annotation arrives inside a JSON request, so it is valid UTF-8.
    try {
      (void)nlohmann::json(std::string(text)).dump();
    } catch (const nlohmann::json::exception&) {
      return 0;
    }
    static const nlohmann::json pod = hetsched::k8s::test::data_json("hived_filter.json")["Pod"];
    nlohmann::json p = pod;
    p["metadata"]["annotations"]["hivedscheduler.microsoft.com/pod-scheduling-spec"] =
        std::string(text);
    const bool rows = (data[1] & 4U) != 0;
    const std::string first = rows ? "r0n0" : "n0";
    const std::string second = rows ? "r2n0" : "n1";
    body = verb == "bind" ? hetsched::k8s::test::bind_for(p, first)
           : verb == "preempt"
               ? nlohmann::json{{"Pod", p}, {"NodeNameToMetaVictims", nlohmann::json::object()}}
               : hetsched::k8s::test::args_for(p, {first, second});
  } else {
    body = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded()) return 0;
  }
  const std::string before = ext.digest();
  const hetsched::k8s::response r = ext.handle(verb, body);
  if (r.status < 200 || r.status >= 500) std::abort();
  if (r.status >= 400 && ext.digest() != before) std::abort();
  // The server sends the body with dump(), which throws on invalid UTF-8 (an error message must
  // not cut a multi-byte character).
  try {
    (void)r.body.dump();
  } catch (const nlohmann::json::exception&) {
    std::abort();
  }
  return 0;
}
