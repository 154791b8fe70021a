// SPDX-License-Identifier: MIT
// fgd: fragmentation-aware placement of fractional-GPU tasks (FGD) and its five baselines, on a
// cluster model in milli units, as the reference simulator of the paper runs them.
//
// A cluster is a list of nodes (CPU, memory, GPU count and model); a task asks for CPU, memory and
// either nothing, a fraction (1..999 milli) of one GPU, or k whole GPUs, optionally restricted to
// some GPU models. The fragmentation of a node is the idle GPU capacity that the *target
// workload* (the most popular task classes of the original trace) could not use, in expectation;
// FGD puts each task where that fragmentation grows least. Everything here is a pure function of
// its inputs: fgd_scheduler::choose() decides and never changes the cluster, fgd_cluster::place()
// is the one mutation point. Semantics: docs/fgd.md and reference/traces_and_metrics.md §6.1.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/result.hpp>

namespace hetsched {

/// Capacity of one GPU in milli-GPU.
inline constexpr std::int64_t fgd_gpu_milli = 1000;

/// A node of the FGD model: its name (ties go to the lexicographically smallest), capacity and
/// GPU model ("" for a CPU-only node).
struct fgd_node_spec {
  std::string name;
  std::int64_t cpu_milli = 0;
  std::int64_t memory_mib = 0;
  std::uint32_t gpus = 0;
  std::string model;

  friend bool operator==(const fgd_node_spec&, const fgd_node_spec&) = default;
};

/// A task (a pod). `gpu_milli` is per GPU: 0 with num_gpu 0 (CPU-only), 1..1000 with num_gpu 1,
/// 1000 with num_gpu > 1. `gpu_spec` lists the allowed GPU models separated by '|' ("" = any).
/// `cpu_milli` is the trace's request, unrounded: the filter and the node's free CPU use it.
struct fgd_task {
  std::int64_t cpu_milli = 0;
  std::int64_t memory_mib = 0;
  std::uint32_t num_gpu = 0;
  std::int64_t gpu_milli = 0;
  std::string gpu_spec;

  friend bool operator==(const fgd_task&, const fgd_task&) = default;
};

/// Returns the CPU of a task's class in the target workload: the request rounded to the nearest
/// 10 milli (halves up; the reference's class list holds cores with two decimals, e.g. 3152 ->
/// 3150, 11908 -> 11910), and a zero request counts as 100 milli (Kubernetes'
/// GetNonzeroRequests). Scheduling itself uses the unrounded request.
[[nodiscard]] constexpr std::int64_t fgd_class_cpu(std::int64_t cpu_milli) noexcept {
  const std::int64_t rounded = (cpu_milli + 5) / 10 * 10;
  return rounded == 0 ? 100 : rounded;
}

/// Returns an error naming the field if `t` breaks the fgd_task contract (negative amounts,
/// gpu_milli outside the rules above).
[[nodiscard]] result<void> validate(const fgd_task& t);

/// Returns true if a node of GPU model `model` may host a task restricted to `gpu_spec`
/// ('|'-separated; empty entries ignored; an empty list allows every model, a CPU-only node
/// (model "") is allowed only then).
[[nodiscard]] bool fgd_model_allowed(std::string_view model, std::string_view gpu_spec) noexcept;

/// One class of the target workload: a distinct (cpu, per-GPU milli, GPU count, allowed models)
/// tuple and how many tasks of the original trace have it.
struct fgd_task_class {
  std::int64_t cpu_milli = 0;
  std::int64_t gpu_milli = 0;
  std::uint32_t num_gpu = 0;
  std::string gpu_spec;
  std::int64_t count = 0;

  friend bool operator==(const fgd_task_class&, const fgd_task_class&) = default;
};

/// The target workload M: the popular classes, most frequent first, with their weights p_m
/// (count / total of the kept classes, computed as the reference does in double).
struct fgd_workload {
  std::vector<fgd_task_class> classes;
  std::vector<double> weights;  ///< Same length as classes; sums to 1 up to rounding.
};

/// Returns the target workload of a trace: classes of `tasks` (CPU through fgd_class_cpu(), per-GPU
/// milli, GPU count, allowed models) sorted by count descending, ties by (cpu, gpu_milli, num_gpu,
/// gpu_spec) descending, then the shortest prefix whose count reaches `popularity_pct` percent of
/// the tasks, renormalised with total = tasks.size(). Errors: an empty trace or popularity_pct
/// outside 1..100.
[[nodiscard]] result<fgd_workload> make_fgd_workload(std::span<const fgd_task> tasks,
                                                     int popularity_pct = 95);

/// Returns the workload made of exactly `classes` (kept in the given order), each weighted
/// (count/total)/(Σcount/total) with total = `total_tasks` (the size of the original trace;
/// pass 0 to use Σcount; the weights' last bits, hence ties of the FGD score, depend on it).
/// Errors: no class, a count < 1, total_tasks < Σcount when not 0.
[[nodiscard]] result<fgd_workload> fgd_workload_from_classes(std::vector<fgd_task_class> classes,
                                                             std::int64_t total_tasks);

/// Buckets of the fragmentation breakdown (FGD paper Fig. 5): for each class, a node's idle GPU
/// counts in one bucket: Q3 when the class fits (only GPUs too small for it count as
/// fragment, in Q2), Q1/Q2/Q4 when it does not (short of both, of GPU, of CPU), XL/XR for a
/// CPU-only class (CPU enough / short) and no_access when the node's model is not allowed.
enum class frag_bucket : std::uint8_t {
  q1_lack_both,
  q2_lack_gpu,
  q3_satisfied,
  q4_lack_cpu,
  xl_satisfied,
  xr_lack_cpu,
  no_access,
};
inline constexpr std::size_t frag_bucket_count = 7;

/// Returns the name of a bucket ("Q1", "Q2", "Q3", "Q4", "XL", "XR", "NoAccess").
[[nodiscard]] std::string_view to_string(frag_bucket b) noexcept;

/// Expected idle milli-GPU per bucket (Σ_m p_m · amount). The fragment is every bucket but Q3;
/// the sum of all buckets is the idle GPU capacity.
struct frag_breakdown {
  std::array<double, frag_bucket_count> milli{};

  /// Returns the fragmentation amount F (all buckets but Q3, summed in bucket order).
  [[nodiscard]] double fragment() const noexcept;
  /// Returns the idle capacity (all buckets).
  [[nodiscard]] double idle() const noexcept;
  /// Returns Q1 + Q2 + Q4.
  [[nodiscard]] double q124() const noexcept;
  /// Adds `o` bucket by bucket.
  frag_breakdown& operator+=(const frag_breakdown& o) noexcept;

  /// Equal if every bucket is equal (exact; the recorder compares samples).
  friend bool operator==(const frag_breakdown&, const frag_breakdown&) = default;
};

/// Returns the breakdown of one node with `cpu_left` free milli-CPU, free milli-GPU per device
/// `gpu_left` and GPU model `model`, under workload `w`. O(|classes| · |gpu_left|).
[[nodiscard]] frag_breakdown node_fragmentation(std::int64_t cpu_left,
                                                std::span<const std::int64_t> gpu_left,
                                                std::string_view model, const fgd_workload& w);

/// The mutable state of an FGD cluster: free CPU, memory and per-GPU milli of every node, and the
/// affinity tags of the GPU tasks it hosts (GpuClustering). Nodes keep their input order; node i
/// is index i everywhere.
class fgd_cluster {
 public:
  /// Returns the idle cluster of `nodes`. Errors: a duplicate or empty name, a negative
  /// capacity, a GPU node without model, more than 64 GPUs on a node.
  [[nodiscard]] static result<fgd_cluster> make(std::vector<fgd_node_spec> nodes);

  [[nodiscard]] std::size_t size() const noexcept { return specs_.size(); }
  [[nodiscard]] const fgd_node_spec& spec(std::size_t node) const { return specs_[node]; }
  [[nodiscard]] std::int64_t cpu_left(std::size_t node) const { return cpu_left_[node]; }
  [[nodiscard]] std::int64_t memory_left(std::size_t node) const { return mem_left_[node]; }
  /// Returns the free milli-GPU of each device of `node`, by device index.
  [[nodiscard]] std::span<const std::int64_t> gpu_left(std::size_t node) const;
  /// Returns the rank of the node's name in lexicographic order (0 = smallest).
  [[nodiscard]] std::uint32_t name_rank(std::size_t node) const { return name_rank_[node]; }
  /// Returns how many GPU tasks of each affinity the node hosts: index 0 = sharing tasks,
  /// index k = tasks of k whole GPUs (k <= 64).
  [[nodiscard]] std::span<const std::uint32_t> affinity(std::size_t node) const;
  /// Returns the number of distinct affinities with at least one task on the node.
  [[nodiscard]] std::uint32_t affinity_kinds(std::size_t node) const;
  /// Returns Σ allocated milli-GPU over the cluster.
  [[nodiscard]] std::int64_t used_gpu_milli() const noexcept { return used_gpu_milli_; }
  /// Returns the number of nodes hosting at least one task.
  [[nodiscard]] std::uint32_t used_nodes() const noexcept { return used_nodes_; }
  /// Returns the total GPU count.
  [[nodiscard]] std::int64_t total_gpus() const noexcept { return total_gpus_; }

  /// Returns true if `t` passes the reference filter on `node`: enough CPU and memory and, for a
  /// GPU task, a GPU node of an allowed model with num_gpu devices of >= gpu_milli free.
  [[nodiscard]] bool fits(std::size_t node, const fgd_task& t) const;

  /// Places `t` on `node`, taking gpu_milli from each device of `gpus`. Errors (cluster
  /// unchanged): bad node or device index, a device twice, wrong device count, not enough CPU,
  /// memory or GPU, model not allowed.
  [[nodiscard]] result<void> place(std::size_t node, const fgd_task& t,
                                   std::span<const std::uint32_t> gpus);

 private:
  std::vector<fgd_node_spec> specs_;
  std::vector<std::int64_t> cpu_left_;
  std::vector<std::int64_t> mem_left_;
  std::vector<std::size_t> gpu_offset_;  // size()+1 offsets into gpu_left_
  std::vector<std::int64_t> gpu_left_;
  std::vector<std::uint32_t> name_rank_;
  std::vector<std::uint32_t> affinity_;  // 65 counters per node
  std::vector<std::uint32_t> tasks_on_node_;
  std::int64_t used_gpu_milli_ = 0;
  std::uint32_t used_nodes_ = 0;
  std::int64_t total_gpus_ = 0;
};

/// Returns the breakdown summed over every node of `c` (node order).
[[nodiscard]] frag_breakdown cluster_fragmentation(const fgd_cluster& c, const fgd_workload& w);

/// The placement policies of the reference experiment.
enum class fgd_policy : std::uint8_t {
  fgd,             ///< FGD: least growth of expected fragmentation.
  best_fit,        ///< Least (CPU, GPU) left after placement, weights 0.5/0.5.
  dot_product,     ///< Tetris alignment of free and requested (CPU, GPU), lowest wins.
  gpu_packing,     ///< Shared GPUs first, then used nodes, then idle nodes.
  gpu_clustering,  ///< Nodes already hosting the same GPU-count class first.
  random,          ///< A uniformly random feasible node (seeded).
};

/// Returns the reference name: "FGD", "BestFit", "DotProduct", "GpuPacking", "GpuClustering",
/// "Random".
[[nodiscard]] std::string_view to_string(fgd_policy p) noexcept;
/// Returns the policy named `name` (the names above, plus "DotProd"); nullopt otherwise.
[[nodiscard]] std::optional<fgd_policy> parse_fgd_policy(std::string_view name) noexcept;

/// A placement: node index, device indices (ascending for exclusive tasks, one for a sharing
/// task, none for a CPU-only task) and the node's integer score.
struct fgd_choice {
  std::uint32_t node = 0;
  std::vector<std::uint32_t> gpus;
  std::int64_t score = 0;

  friend bool operator==(const fgd_choice&, const fgd_choice&) = default;
};

/// Chooses a node and GPUs for one task at a time, as the reference simulator does.
/// @see Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient
/// Descent (Weng et al., USENIX ATC'23).
///
/// Filter: fgd_cluster::fits(). Every feasible node gets an integer score 0..100; the highest
/// wins and ties go to the lexicographically smallest node name (the reference's patched
/// selectHost). Scores (all in double as the reference computes them, truncated toward zero):
/// - fgd: ⌊100·sigmoid((F_n before − F_n after)/1000)⌋ with F_n = node_fragmentation().
///   A sharing task tries every device with room and keeps the first best (lowest index); an
///   exclusive task takes the lowest-index fully free devices; a CPU-only task only uses CPU.
/// - best_fit: ⌊100·(1 − 0.5·(cpu_left−cpu)/128000 − 0.5·(gpu_left−gpu)/8000)⌋ (totals per
///   node); its min-max normalisation keeps the order so it is not applied.
/// - dot_product: ⌊100·(1 − (cpu_left·cpu/128000² + gpu_left·gpu/8000²)/2)⌋.
/// - gpu_packing: 100 − Σ⌊100·r_i/1000⌋/10 (≥ 50) when it fits on partly used devices, else
///   50 − (fully free devices it takes) (≥ 33) on a node with a used device, else
///   max(33 − G_n, G_n); 0 for a CPU-only task.
/// - gpu_clustering: 25·(8000 − gpu_left)/8000 (integer) plus 75 when the node hosts only the
///   task's affinity, 50 when it hosts it among others, 25 when it hosts nothing, 0 otherwise;
///   0 for a CPU-only task.
/// - random: one feasible node drawn uniformly (feasible nodes in index order, splitmix64 stream
///   of `seed`, unbiased rejection), then for a sharing task one fitting device by reservoir
///   sampling, in the reference's order of draws.
/// Devices: fgd as above; every baseline takes the lowest-index fully free devices for an
/// exclusive task; a sharing task goes to the device with the least room that fits (lowest
/// index on ties) except under random, which draws one of the fitting devices uniformly.
///
/// Not thread-safe: choose() updates the score cache (keyed by exact node state, so results do
/// not depend on it) and advances the random stream.
class fgd_scheduler {
 public:
  /// `workload` is used by fgd only; `seed` by random only.
  fgd_scheduler(fgd_policy policy, fgd_workload workload, std::uint64_t seed = 0);

  [[nodiscard]] fgd_policy policy() const noexcept { return policy_; }
  [[nodiscard]] const fgd_workload& workload() const noexcept { return workload_; }

  /// Returns the placement of `t` on `c`, or nullopt when no node passes the filter (the
  /// reference counts such a task as failed). Never changes `c`. O(nodes) plus the scores of the
  /// nodes whose state changed since they were last scored for a task of this shape.
  [[nodiscard]] std::optional<fgd_choice> choose(const fgd_cluster& c, const fgd_task& t);

  /// Returns the score of `t` on `node` under this policy (random: 0), with the devices the
  /// policy would take. Precondition: c.fits(node, t).
  [[nodiscard]] fgd_choice score(const fgd_cluster& c, std::size_t node, const fgd_task& t) const;

 private:
  struct node_cache {
    std::int64_t cpu_left = -1;
    std::vector<std::int64_t> gpu_left;
    std::string model;
    double fragment = 0;
    std::vector<std::int64_t> scores;  // by shape id; -1 = not computed for this state
  };
  [[nodiscard]] std::uint32_t shape_id(const fgd_task& t);
  [[nodiscard]] double cached_fragment(const fgd_cluster& c, std::size_t node);
  std::uint64_t next_random();

  fgd_policy policy_;
  fgd_workload workload_;
  std::uint64_t rng_state_;
  std::vector<node_cache> cache_;
  std::vector<std::array<std::int64_t, 3>> shapes_;  // (cpu, num_gpu, gpu_milli)
};

}  // namespace hetsched
