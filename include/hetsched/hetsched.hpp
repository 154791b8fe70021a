// SPDX-License-Identifier: MIT
// hetsched: the umbrella header, including every public header of hetsched::hetsched.
//
// Library code and tests include the precise header instead. The hwloc importer
// (<hetsched/topology/hwloc_import.hpp>) belongs to hetsched::hwloc and is not included here; the
// simulator and the workload readers belong to hetsched::sim (umbrella <hetsched/sim.hpp>).
#pragma once

#include <hetsched/metrics/fragmentation.hpp>
#include <hetsched/metrics/metrics.hpp>
#include <hetsched/metrics/run_record.hpp>
#include <hetsched/model/cluster.hpp>
#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/decision.hpp>
#include <hetsched/model/gpu_type.hpp>
#include <hetsched/model/ids.hpp>
#include <hetsched/model/job.hpp>
#include <hetsched/model/lifecycle.hpp>
#include <hetsched/model/resources.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/affinity_packer.hpp>
#include <hetsched/policies/baseline_placement.hpp>
#include <hetsched/policies/capacity_placement.hpp>
#include <hetsched/policies/capacity_preemption.hpp>
#include <hetsched/policies/capacity_queue.hpp>
#include <hetsched/policies/capacity_state.hpp>
#include <hetsched/policies/capacity_state_records.hpp>
#include <hetsched/policies/capacity_tree.hpp>
#include <hetsched/policies/capacity_tree_json.hpp>
#include <hetsched/policies/drf.hpp>
#include <hetsched/policies/fgd.hpp>
#include <hetsched/policies/fgd_placement.hpp>
#include <hetsched/policies/gandiva.hpp>
#include <hetsched/policies/gandiva_devices.hpp>
#include <hetsched/policies/gandiva_packing.hpp>
#include <hetsched/policies/gandiva_placement.hpp>
#include <hetsched/policies/gandiva_time_slicing.hpp>
#include <hetsched/policies/gang_placement.hpp>
#include <hetsched/policies/grow_shrink.hpp>
#include <hetsched/policies/hived.hpp>
#include <hetsched/policies/hived_config.hpp>
#include <hetsched/policies/hived_config_json.hpp>
#include <hetsched/policies/hived_placement.hpp>
#include <hetsched/policies/hived_topology.hpp>
#include <hetsched/policies/indexed_packer.hpp>
#include <hetsched/policies/job_order.hpp>
#include <hetsched/policies/migrating_placement.hpp>
#include <hetsched/policies/migration_planner.hpp>
#include <hetsched/policies/orderings.hpp>
#include <hetsched/policies/policy.hpp>
#include <hetsched/policies/proportional_preemption.hpp>
#include <hetsched/policies/queue_placement.hpp>
#include <hetsched/policies/registry.hpp>
#include <hetsched/policies/throughput_table.hpp>
#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/topology/graph.hpp>
#include <hetsched/topology/import.hpp>
#include <hetsched/topology/json.hpp>
#include <hetsched/topology/templates.hpp>
#include <hetsched/topology/views.hpp>
#include <hetsched/version.hpp>
