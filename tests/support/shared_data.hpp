// SPDX-License-Identifier: MIT
// Reads files from ../shared (data/ and vectors/) for tests; the path comes from the CMake cache
// variable HETSCHED_SHARED_DIR (default: ../shared beside the repository).
#pragma once

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace hetsched::testing {

/// Returns the absolute path of `relative` inside the shared folder.
inline std::string shared_path(const std::string& relative) {
  return std::string(HETSCHED_SHARED_DIR) + "/" + relative;
}

/// Returns the whole content of `relative` inside the shared folder; throws if it cannot be read.
inline std::string read_shared(const std::string& relative) {
  std::ifstream in(shared_path(relative), std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + shared_path(relative));
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace hetsched::testing
