// SPDX-License-Identifier: MIT
// libFuzzer target for the extender's HTTP layer: raw bytes as one client connection, parsed by
// cpp-httplib's Server::process_request exactly as off a socket (extender_server::serve_bytes
// runs the server's own connection loop over an in-memory stream: keep-alive, pipelining,
// chunked and gzip bodies, the body limit, the byte budget per request, authentication, every
// route). Byte 0 picks the server: bit 0 a bearer token ("fuzz-token-0123456789"), bit 1 the
// HiveD backend instead of the packer; the rest is the connection's bytes. Aborts on a 5xx
// status, on output that is not a sequence of HTTP/1.1 responses, on more input read than given
// or than the per-request budget allows, and on a state change when no request got a 200.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "extender.hpp"
#include "fixtures.hpp"
#include "server.hpp"

namespace {

using namespace hetsched::k8s;

constexpr std::size_t fuzz_max_body = 16384;

struct fuzz_server {
  std::unique_ptr<extender> ex;
  std::unique_ptr<extender_server> server;
};

fuzz_server make(bool hived, bool token) {
  extender_options eo;
  eo.pending_capacity = 256;
  fuzz_server f;
  f.ex = std::make_unique<extender>(hived ? test::hived_cluster() : test::packer_cluster(), eo);
  server_options so;
  so.max_body_bytes = fuzz_max_body;
  so.enable_release = true;
  if (token) so.bearer_token = "fuzz-token-0123456789";
  f.server = std::make_unique<extender_server>(*f.ex, so);
  return f;
}

fuzz_server& server_for(std::uint8_t which) {
  static fuzz_server servers[4] = {make(false, false), make(false, true), make(true, false),
                                   make(true, true)};
  return servers[which & 3U];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  auto& f = server_for(data[0]);
  const std::string_view raw(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::string before = f.ex->digest();
  std::size_t consumed = 0;
  const std::string out = f.server->serve_bytes(raw, &consumed);
  if (consumed > raw.size()) std::abort();
  // The output must be whole responses back to back: status line, headers, Content-Length
  // bytes of body (cpp-httplib always writes Content-Length for set_content).
  bool any_200 = false;
  std::size_t responses = 0;
  for (std::size_t at = 0; at < out.size();) {
    if (out.compare(at, 9, "HTTP/1.1 ") != 0 || at + 12 > out.size()) std::abort();
    const char hundreds = out[at + 9];
    if (hundreds < '1' || hundreds > '4') std::abort();  // no 5xx
    if (out.compare(at + 9, 3, "200") == 0) any_200 = true;
    const std::size_t head_end = out.find("\r\n\r\n", at);
    if (head_end == std::string::npos) std::abort();
    std::size_t body = 0;
    const std::size_t cl = out.find("\r\nContent-Length: ", at);
    if (cl != std::string::npos && cl < head_end)
      body = std::strtoull(out.c_str() + cl + 18, nullptr, 10);
    // The answer to HEAD has the length but no body; no body of ours (JSON, "ok", metrics
    // text) starts like a status line.
    if (head_end + 4 == out.size() || out.compare(head_end + 4, 9, "HTTP/1.1 ") == 0) body = 0;
    at = head_end + 4 + body;
    if (at > out.size()) std::abort();
    ++responses;
  }
  // every request read at most its head and twice the body limit on the wire
  const std::size_t budget = max_request_head_bytes + 2 * fuzz_max_body;
  if (consumed > (responses + 1) * budget) std::abort();
  if (!any_200 && f.ex->digest() != before) std::abort();
  return 0;
}
