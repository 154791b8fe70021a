// SPDX-License-Identifier: MIT
// Compile check: the C headers are usable from C++ (extern "C", no C-only constructs), and the
// library links into a C++ program.
#include <cstdio>
#include <cstring>

#include <hetsched/c/hetsched.h>

int main() {
  hs_cluster_t* cluster = nullptr;
  if (hs_cluster_from_template("workstation-4gpu", nullptr, &cluster) != HS_OK) {
    std::fprintf(stderr, "cluster: %s\n", hs_last_error());
    return 1;
  }
  const bool ok = hs_cluster_gpu_count(cluster) == 4 && std::strlen(hs_version()) > 0 &&
                  hs_api_version() == HS_API_VERSION;
  hs_cluster_free(cluster);
  hs_status status = hs_cluster_builtin(nullptr, &cluster);
  if (status != HS_INVALID_ARGUMENT || std::strstr(hs_last_error(), "name") == nullptr) return 1;
  return ok ? 0 : 1;
}
