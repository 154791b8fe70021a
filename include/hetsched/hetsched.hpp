// SPDX-License-Identifier: MIT
// hetsched: the umbrella header, including every public header of hetsched::hetsched.
//
// Library code and tests include the precise header instead. The hwloc importer
// (<hetsched/topology/hwloc_import.hpp>) belongs to hetsched::hwloc and is not included here.
#pragma once

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
#include <hetsched/policies/drf.hpp>
#include <hetsched/policies/gandiva.hpp>
#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/topology/graph.hpp>
#include <hetsched/topology/import.hpp>
#include <hetsched/topology/json.hpp>
#include <hetsched/topology/templates.hpp>
#include <hetsched/topology/views.hpp>
#include <hetsched/version.hpp>
#include <hetsched/workload/trace.hpp>
