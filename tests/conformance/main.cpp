// SPDX-License-Identifier: MIT
// hetsched-conform FILE...: runs conformance vector files and ends with "N passed, N failed".
// Exits 1 if any case failed or a file could not be read, 0 otherwise.
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>

#include "conform.hpp"

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
    try {
      const auto ran = run_vector_text(text.str(), argv[i], out);
      if (!ran) {
        std::fprintf(stderr, "hetsched-conform: %s: %s\n", argv[i], ran.error().message.c_str());
        unreadable = true;
      }
    } catch (const std::exception& e) {
      // A runner bug, not a vector problem (those fail their case): report it, keep going.
      out.fail(argv[i], fmt::format("internal error of the runner: {}", e.what()));
    }
  }
  fmt::print("{} passed, {} failed, {} skipped\n", out.passed(), out.failed(), out.skipped());
  return out.failed() > 0 || unreadable ? 1 : 0;
}
