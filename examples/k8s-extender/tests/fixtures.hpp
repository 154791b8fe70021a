// SPDX-License-Identifier: MIT
// Shared helpers of the extender tests: fixture files, test clusters and pod bodies.
#pragma once

#include <memory>
#include <string>

#include "backend.hpp"
#include "extender.hpp"

#include <nlohmann/json.hpp>

namespace hetsched::k8s::test {

/// Returns the text of tests/data/`name`.
std::string read_data(const std::string& name);
/// Returns tests/data/`name` parsed.
nlohmann::json data_json(const std::string& name);

/// Packer cluster: v100-0..3 (dgx1-v100, V100) and a100-0 (dgx-a100, A100, zone=west).
std::unique_ptr<backend> packer_cluster();
/// HiveD cluster: one chain NODE(4 leaves: 2 PCIE x 2 GPU) with nodes n0 and n1; VCs a and b own
/// one NODE cell each.
std::unique_ptr<backend> hived_cluster();

/// HiveD cluster with options::cell_type_requests: chain ROW(2 RACK) -> RACK(2 NODE) -> NODE(2
/// PCIE, node level) -> PCIE(2 GPU), two ROW cells of nodes r0n0, r0n1, r1n0, r1n1 (row 0) and r2n0
/// ... r3n1 (row 1). VC v owns one ROW cell, VC w two ROW.RACK.NODE cells.
std::unique_ptr<backend> hived_rows_cluster(bool cell_type_requests = true);

/// Returns a v1.Pod JSON with `gpus` nvidia.com/gpu in one container.
nlohmann::json gpu_pod(const std::string& name, const std::string& uid, int gpus);
/// Returns a v1.Pod JSON with a HiveD pod-scheduling-spec annotation (leaf type GPU).
nlohmann::json hived_pod(const std::string& name, const std::string& uid, const std::string& vc,
                         int priority, int leaves);
/// Returns a v1.Pod JSON whose pod-scheduling-spec annotation is `annotation` (text).
nlohmann::json annotated_pod(const std::string& name, const std::string& uid,
                             const std::string& annotation);
/// Returns ExtenderArgs with NodeNames.
nlohmann::json args_for(const nlohmann::json& pod, const std::vector<std::string>& nodes);
/// Returns ExtenderBindingArgs for `pod` on `node`.
nlohmann::json bind_for(const nlohmann::json& pod, const std::string& node);

}  // namespace hetsched::k8s::test
