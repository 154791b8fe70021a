// SPDX-License-Identifier: MIT
// libFuzzer target for the extender's request handling: arbitrary bytes as the body of filter,
// prioritize, preempt, bind or release on a packer and a HiveD extender. Input layout: byte 0
// picks the verb, byte 1 the backend, the rest is the body text. Checks that the handler never
// crashes, answers with a 2xx or 4xx status, and changes no state when it answers 4xx.
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

hetsched::k8s::extender& extender_for(std::uint8_t which) {
  static auto packer =
      std::make_unique<hetsched::k8s::extender>(hetsched::k8s::test::packer_cluster());
  static auto hived =
      std::make_unique<hetsched::k8s::extender>(hetsched::k8s::test::hived_cluster());
  return (which & 1U) != 0 ? *hived : *packer;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  static constexpr std::string_view verbs[] = {"filter", "prioritize", "preempt", "bind",
                                               "release"};
  const std::string_view verb = verbs[data[0] % 5];
  auto& ext = extender_for(data[1]);
  const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);
  const nlohmann::json body = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return 0;
  const std::string before = ext.digest();
  const hetsched::k8s::response r = ext.handle(verb, body);
  if (r.status < 200 || r.status >= 500) std::abort();
  if (r.status >= 400 && ext.digest() != before) std::abort();
  return 0;
}
