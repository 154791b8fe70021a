// SPDX-License-Identifier: MIT
// Reader for the Pollux (OSDI'21) simulator workloads (petuum/adaptdl, branch osdi21-artifact,
// `simulator/workloads*/workload-N.csv`).
//
// A workload is a CSV with header `name,time,application,num_replicas,batch_size`: the job's name,
// its arrival in seconds, one of six applications (bert, cifar10, deepspeech2, imagenet, ncf,
// yolov3), its GPU count and its global batch size. Pollux's simulator derives run times from
// per-application throughput and validation traces that are not part of the workload; the reader
// maps each application to an epoch count and a reference GPU time instead (pollux_application),
// documented in docs/workloads.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/result.hpp>
#include <hetsched/workload/trace.hpp>

namespace hetsched::workload {

/// What the reader knows about one Pollux application.
struct pollux_application {
  std::string name;         ///< As in the `application` column, e.g. "cifar10".
  std::int64_t epochs = 0;  ///< Epochs to completion (Pollux `applications.py` max_epochs), >= 1.
  std::int64_t gpu_ms = 0;  ///< Reference GPU time of one job (all replicas together), >= 1.

  friend bool operator==(const pollux_application&, const pollux_application&) = default;
};

/// Returns the default application table, sorted by name. Epochs are Pollux's max_epochs (bert 2,
/// cifar10 100, deepspeech2 80, imagenet 90, ncf 10, yolov3 50). GPU times follow Pollux's
/// workload generator, which drew the application from the GPU time of a sampled Philly job
/// (< 1 GPU-hour: cifar10 or ncf; 1-10: deepspeech2, half of them turned into bert; 10-100:
/// yolov3; >= 100 (and < 1000): imagenet): 1,800 s for the first bucket (its middle) and the
/// geometric middle of the others (11,384 s, 113,842 s, 1,138,420 s).
[[nodiscard]] std::vector<pollux_application> pollux_default_applications();

/// How a Pollux workload becomes trace_jobs.
struct pollux_options {
  std::string tenant;  ///< Tenant of every job (Pollux workloads have none); may be empty.
  /// Application table; empty means pollux_default_applications().
  std::vector<pollux_application> applications;
};

/// Returns the jobs of Pollux workload `text` read from `source`, stably sorted by submit time.
/// Each job: name = name, submit_ms = time s * 1000 rounded, tasks = num_replicas with one GPU
/// each, model = application, work_units = the application's epochs, duration_ms =
/// ceil(gpu_ms / num_replicas) (perfect scaling; Pollux's goodput model is not reproduced).
/// batch_size is validated (an integer >= 1) but not kept.
/// Errors (invalid_argument) "<source>:<line>: field '<name>': <problem>": a missing column, a
/// wrong field count, an empty or repeated name, a negative or malformed time, num_replicas
/// outside [1, 100000], an application not in the table, a bad table entry (line 0, field
/// 'applications').
[[nodiscard]] result<trace> parse_pollux_workload(std::string_view text, std::string_view source,
                                                  const pollux_options& options = {});

}  // namespace hetsched::workload
