// SPDX-License-Identifier: MIT
// Umbrella header of hetsched::sim (the target to link): the trace-driven simulator and the
// workload readers, with the core (hetsched/hetsched.hpp). For quick experiments and the
// interpreter; library code and tests include the precise header instead.
#pragma once

#include <hetsched/hetsched.hpp>
#include <hetsched/sim/engine.hpp>
#include <hetsched/sim/fgd_replay.hpp>
#include <hetsched/sim/fragmentation_recorder.hpp>
#include <hetsched/sim/policy_defaults.hpp>
#include <hetsched/sim/sharing_anomaly.hpp>
#include <hetsched/sim/speed_model.hpp>
#include <hetsched/workload/cluster_summary.hpp>
#include <hetsched/workload/gavel.hpp>
#include <hetsched/workload/native_csv.hpp>
#include <hetsched/workload/openb.hpp>
#include <hetsched/workload/openb_cluster.hpp>
#include <hetsched/workload/pollux.hpp>
#include <hetsched/workload/synthetic.hpp>
#include <hetsched/workload/tiresias.hpp>
#include <hetsched/workload/trace.hpp>
#include <hetsched/workload/trace_registry.hpp>
#include <hetsched/workload/vc_quota.hpp>
