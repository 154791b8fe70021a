// SPDX-License-Identifier: MIT
// Topology-aware GPU packer: go-gpuallocator's best-effort objective, solved exactly and fast.
//
// A request for `size` GPUs of one node is answered the way NVIDIA/go-gpuallocator's best-effort
// policy does: pair scores from the links between two GPUs (PCIe level + 100 per NVLink), the
// available GPUs split into blocks of `size` (padded to a multiple of `size`; all padding in one
// block), the partition with the highest sum of block scores that keeps `required` together in a
// padding-free block, and inside it the best block holding `required`. Instead of enumerating every
// partition (2.6M for 4 of 16 GPUs, ~1.9e8 for 3 of 16) an exact search over subsets of the
// available GPUs (at most max_packer_gpus) finds the same optimum: threshold queries, a memo, and
// "largest block first" (a partition above f has a full block above (f - padded block) / full
// blocks). Two modes: `compat` reproduces go-gpuallocator's answer tie for tie; `lexmax`
// (default) is order-independent. Measured (bench/micro/packer_bench.cpp, Release, CPU time):
// 8-GPU nodes <= 2.4 us for every size; 16-GPU nodes (DGX-2 full, PCIe-only, partly used; random
// and two-level link matrices) <= 0.36 ms for every size and mode; the worst 16-GPU case of a
// wider survey about 1 ms (spread, a matrix of two pair scores; docs/packer.md §5).
// Beyond go-gpuallocator (affinity_packer_bandwidth.cpp): pair scores by real bandwidth (NVSwitch
// systems included), NCCL-style ring and tree bottleneck bandwidth of a set, a bandwidth node
// score, a same-NUMA pair term, per-GPU NUMA/NIC bonuses and a per-job locality sensitivity
// (Tiresias). docs/packer.md gives the objective, the modes and every tie-break chain.
//
// @see NVIDIA/go-gpuallocator, gpuallocator/besteffort_policy.go (commit 876e7b7)
// @see J. Gu et al., "Tiresias: A GPU Cluster Manager for Distributed Deep Learning", NSDI'19
//      (consolidate only jobs whose models are locality sensitive).
// @see NVIDIA/nccl src/graph (path bandwidths, rings and trees).
// @see W. Xiao et al., "Gandiva: Introspective Cluster Scheduling for Deep Learning", OSDI'18
//      (affinity-aware packing of a job's GPUs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <hetsched/model/result.hpp>
#include <hetsched/topology/views.hpp>

namespace hetsched {

class node_topology;

/// The most GPUs one allocate() call considers (states are bitmasks; tables cover 16 bits).
inline constexpr std::size_t max_packer_gpus = 16;

/// go-gpuallocator's link weights (besteffort_policy.go calculateGPUPairScore).
namespace packer_weight {
inline constexpr std::int64_t sys = 10;         ///< P2PLinkCrossCPU.
inline constexpr std::int64_t node = 20;        ///< P2PLinkSameCPU.
inline constexpr std::int64_t phb = 30;         ///< P2PLinkHostBridge.
inline constexpr std::int64_t pxb = 40;         ///< P2PLinkMultiSwitch.
inline constexpr std::int64_t pix = 50;         ///< P2PLinkSingleSwitch.
inline constexpr std::int64_t same_board = 60;  ///< P2PLinkSameBoard.
inline constexpr std::int64_t nvlink = 100;     ///< Per NVLink of a bundle.
}  // namespace packer_weight

/// Returns the weight of a PCIe relation: SYS 10, NODE 20, PHB 30, PXB 40, PIX 50; 0 for `self`
/// and `unknown` (no PCIe link observed contributes nothing).
[[nodiscard]] std::int64_t pcie_weight(pcie_relation r) noexcept;

/// Returns the pair score of a relation: pcie_weight(r.pcie) + 100 * r.nvlinks.
[[nodiscard]] std::int64_t pair_weight(const pair_relation& r) noexcept;

/// Returns the weight of one go-gpuallocator P2PLinkType value (the integers of kerthcet's
/// `node.gpu.info/topology` annotation): 0 unknown, 1..6 SYS..same board (10..60), 7..24 one to
/// eighteen NVLinks (100..1800); -1 (the diagonal) weighs 0. Errors: out_of_range otherwise.
[[nodiscard]] result<std::int64_t> go_link_weight(std::int64_t value);

/// Which GPU pair bandwidth a bandwidth score reads from node_views.
enum class bandwidth_source : std::uint8_t {
  /// node_views::bandwidth_mb_s: the links' own bandwidths, NVLinks through an NVSwitch fabric at
  /// their real rate (DGX-2 150000, DGX A100 300000, HGX H100 450000 MB/s per GPU pair), PCIe
  /// with the inter-socket link when it is crossed.
  links,
  /// node_views::nccl_bandwidth_mb_s: NCCL's app-level path bandwidth (about 80% of the links').
  nccl,
};

/// What a pair score measures.
enum class pair_metric : std::uint8_t {
  /// go-gpuallocator's link count: pair_weight() (PCIe level + 100 per NVLink, any generation).
  link_count,
  /// bandwidth_scale * bandwidth (MB/s) + pair_weight(): the real bandwidth first, the link-count
  /// score as an exact tie-break (its sums stay below bandwidth_scale for up to 16 GPUs with at
  /// most 18 NVLinks per pair).
  bandwidth,
};

/// The factor of the bandwidth in pair_metric::bandwidth scores (2^18 > 120 pairs * 1860).
inline constexpr std::int64_t bandwidth_scale = std::int64_t{1} << 18;

/// The terms of pair_score_matrix::from_views(views, terms).
struct pair_terms {
  pair_metric metric = pair_metric::link_count;
  /// The bandwidth read by pair_metric::bandwidth.
  bandwidth_source source = bandwidth_source::links;
  /// Added to the score of a pair of GPUs local to the same known NUMA node (0: no term). Lets a
  /// PCIe-only box whose pairs all read SYS (go-gpuallocator #17) keep a job on one NUMA node.
  /// A negative value lowers such pairs instead; a pair score never goes below 0.
  std::int64_t same_numa = 0;

  friend bool operator==(const pair_terms&, const pair_terms&) = default;
};

/// A symmetric, non-negative integer matrix of GPU pair scores (diagonal ignored).
class pair_score_matrix {
 public:
  pair_score_matrix() = default;

  /// Returns the matrix of `rows` (row i, column j = score of GPUs i and j).
  /// Errors: invalid_argument naming the cell if a row has the wrong length, a cell is negative
  /// or (i,j) != (j,i). Diagonal cells must be 0 or the matrix is refused as well.
  [[nodiscard]] static result<pair_score_matrix> from_rows(
      std::span<const std::vector<std::int64_t>> rows);

  /// Returns the go-gpuallocator scores of the GPUs of `views`: pair_weight(relation(i, j)).
  /// NVLinks through an NVSwitch count (go-gpuallocator cannot see them; on NVSwitch systems every
  /// pair gains the same amount, so the ranking is the PCIe-only one). Never fails.
  [[nodiscard]] static pair_score_matrix from_views(const node_views& views);

  /// Returns from_views(topology.views()).
  [[nodiscard]] static pair_score_matrix from_topology(const node_topology& topology);

  /// Returns the scores of the GPUs of `views` under `terms` (see pair_terms). With the default
  /// terms this equals from_views(views). Never fails.
  [[nodiscard]] static pair_score_matrix from_views(const node_views& views,
                                                    const pair_terms& terms);

  /// Returns the GPU pair bandwidths of `views` in MB/s (diagonal 0) as read by `source`, for
  /// collective_bandwidth_of() and bandwidth_node_score(). Never fails.
  [[nodiscard]] static pair_score_matrix bandwidths(const node_views& views,
                                                    bandwidth_source source);

  /// Returns the number of GPUs (rows).
  [[nodiscard]] std::size_t size() const noexcept { return n_; }
  /// Returns the score of GPUs i and j. Precondition: i, j < size().
  [[nodiscard]] std::int64_t score(std::size_t i, std::size_t j) const noexcept {
    return cells_[i * n_ + j];
  }
  /// Returns the sum of score() over the unordered pairs of `gpus`. Precondition: each < size().
  [[nodiscard]] std::int64_t set_score(std::span<const std::uint32_t> gpus) const noexcept;

  friend bool operator==(const pair_score_matrix&, const pair_score_matrix&) = default;

 private:
  std::size_t n_ = 0;
  std::vector<std::int64_t> cells_;
};

/// Bottleneck bandwidths of a GPU set (MB/s), the figures NCCL's collectives run at when links are
/// not shared: every figure is 0 for fewer than two GPUs.
struct collective_bandwidth {
  /// The best ring: the highest, over the cyclic orders of the set, lowest pair bandwidth along
  /// the cycle (NCCL's ring all-reduce).
  std::int64_t ring_mb_s = 0;
  /// The best spanning tree: the lowest edge of a maximum spanning tree (NCCL's tree/chain; never
  /// below ring_mb_s).
  std::int64_t tree_mb_s = 0;
  /// The lowest bandwidth of any pair of the set (Koordinator's bottleneck bandwidth).
  std::int64_t pair_min_mb_s = 0;

  friend bool operator==(const collective_bandwidth&, const collective_bandwidth&) = default;
};

/// Returns the ring, tree and pair bottleneck bandwidths of `gpus` under `bandwidths` (MB/s, e.g.
/// pair_score_matrix::bandwidths()). Contract: exact; the ring by a Hamiltonian-cycle DP over
/// subsets at each candidate threshold (binary search), O(2^k * k^2 * log(k^2)) for k GPUs. Errors:
/// out_of_range for a GPU >= bandwidths.size() or more than max_packer_gpus GPUs;
/// invalid_argument for a repeated GPU. Deterministic.
[[nodiscard]] result<collective_bandwidth> collective_bandwidth_of(
    const pair_score_matrix& bandwidths, std::span<const std::uint32_t> gpus);

/// The reference of bandwidth_node_score(): 18 NVLinks of generation 5 (50000 MB/s each), the
/// bandwidth analogue of kerthcet's 18-NVLink normalization.
inline constexpr std::int64_t reference_bandwidth_mb_s = 900000;

/// Returns the bandwidth node score 0..100 of `gpus`: floor(100 * ring_mb_s / reference_mb_s)
/// clipped to 100 (DGX-2 16, DGX A100 33, HGX H100 50 for any two GPUs or more with the links
/// source); 0 for fewer than two GPUs or reference_mb_s <= 0. Errors as collective_bandwidth_of().
[[nodiscard]] result<std::int64_t> bandwidth_node_score(
    const pair_score_matrix& bandwidths, std::span<const std::uint32_t> gpus,
    std::int64_t reference_mb_s = reference_bandwidth_mb_s);

/// How allocate() breaks ties between optimal answers.
enum class packer_mode : std::uint8_t {
  /// Maximize (partition score, chosen block score); then the lexicographically smallest sorted
  /// block. Never returns a padded block. Independent of enumeration order. Size 1 without a
  /// required GPU (every partition scores 0): the GPU whose removal least damages the remaining
  /// pairs, i.e. the lowest sum of scores with the other available GPUs; then the lowest index.
  lexmax,
  /// go-gpuallocator's exact answer: the first maximal partition in its enumeration order
  /// (recursive; the block holding the lowest remaining GPU first, its other members in
  /// lexicographic combination order over the ascending available list, padding last; strict >
  /// keeps the first maximum), then the first best block of it holding `required`. size 1 gives
  /// the lowest available GPU or the required one. When go-gpuallocator would return the padded
  /// block (its bug, go-gpuallocator PR #80) the answer is `padded_block` with no GPUs.
  compat,
};

/// Why allocate() returned no GPUs (normal outcomes, not errors).
enum class packer_status : std::uint8_t {
  allocated,             ///< `gpus` holds the answer.
  insufficient_gpus,     ///< Fewer available GPUs than `size`.
  too_many_required,     ///< More required GPUs than `size`.
  required_unavailable,  ///< A required GPU is not available.
  padded_block,          ///< compat only: go-gpuallocator would return a padded block.
};

/// The answer of allocate().
struct packer_answer {
  packer_status status = packer_status::allocated;
  /// The chosen GPUs, ascending; empty unless status == allocated.
  std::vector<std::uint32_t> gpus;
  /// set_score(gpus) (0 when empty).
  std::int64_t block_score = 0;
  /// The score of the best partition (0 unless allocated or padded_block).
  std::int64_t partition_score = 0;

  friend bool operator==(const packer_answer&, const packer_answer&) = default;
};

/// Returns the best block of `size` GPUs out of `available` that holds every `required` GPU,
/// under go-gpuallocator's two-level objective and the tie-breaks of `mode`.
/// Contract: GPU indices index `scores`; `available` and `required` may be in any order (they are
/// taken ascending, as go-gpuallocator's Allocator passes them). Errors: invalid_argument if
/// size == 0 or a list repeats a GPU; out_of_range if a GPU is >= scores.size() or more than
/// max_packer_gpus are available. The go-gpuallocator failures (fewer available than size, more
/// required than size, required not available) are statuses. Deterministic. Exact; exponential in
/// the worst case (NP-hard), pruned by bounds and the largest-block threshold (docs/packer.md).
/// Tie-breaks: lexmax keeps the highest partition score, then the highest score of the chosen
/// block, then the lexicographically smallest sorted block; compat keeps go-gpuallocator's first
/// maximal partition in its enumeration order, then its first best block (see packer_mode).
[[nodiscard]] result<packer_answer> allocate(const pair_score_matrix& scores,
                                             std::span<const std::uint32_t> available,
                                             std::span<const std::uint32_t> required,
                                             std::size_t size,
                                             packer_mode mode = packer_mode::lexmax);

/// Returns the node score 0..100 of kerthcet/scheduler-plugins' gputopologyaware plugin for the
/// set `gpus`: floor(set_score * 100 / (k(k-1)/2 * 1800)) clipped to 100, 1800 being 18 NVLinks;
/// 0 for fewer than two GPUs. Precondition: each GPU < scores.size(). Integer arithmetic.
[[nodiscard]] std::int64_t node_score(const pair_score_matrix& scores,
                                      std::span<const std::uint32_t> gpus) noexcept;

/// How much a job's speed depends on the locality of its GPUs (Tiresias: consolidate only the
/// models that need it, e.g. large tensors as in VGG or AlexNet; spread the others).
enum class locality_sensitivity : std::uint8_t {
  /// Topology sensitive: allocate()'s objective (the best-connected block of a best partition).
  consolidate,
  /// Insensitive: the lowest-scoring block of a best partition (the other blocks of that
  /// partition, the best-connected ones, stay free for locality-sensitive jobs).
  spread,
};

/// Preferences of allocate_with().
struct placement_preferences {
  locality_sensitivity locality = locality_sensitivity::consolidate;
  /// Per-GPU bonus indexed like the score matrix (empty: none; else exactly scores.size() values,
  /// each >= 0), added to a candidate block's key: a bonus of w per GPU trades against w of pair
  /// score. Build it with numa_bonus() and nic_bonus() (add them for both terms).
  std::vector<std::int64_t> gpu_bonus;

  friend bool operator==(const placement_preferences&, const placement_preferences&) = default;
};

/// Returns a bonus of `weight` for every GPU of `views` local to NUMA node `numa` (where the job's
/// CPUs and memory are), 0 for the others (all 0 if `numa` < 0).
[[nodiscard]] std::vector<std::int64_t> numa_bonus(const node_views& views, std::int32_t numa,
                                                   std::int64_t weight);

/// Returns a bonus of `weight` for every GPU of `views` with a NIC at `level` or closer (default
/// PXB, NCCL's default GPUDirect RDMA level NCCL_NET_GDR_LEVEL), 0 for the others.
[[nodiscard]] std::vector<std::int64_t> nic_bonus(const node_views& views, std::int64_t weight,
                                                  pcie_relation level = pcie_relation::pxb);

/// Returns the block of `size` GPUs out of `available` holding every `required` GPU under
/// `prefs`; statuses, errors and the go-gpuallocator failures as allocate(), plus
/// invalid_argument if gpu_bonus has the wrong length or a negative value.
/// consolidate: the partition score of allocate(), then the highest block score + bonus sum,
/// then the lexicographically smallest sorted block (with an empty bonus: allocate(lexmax)'s
/// answer, including its size-1 least-damage rule, which then also adds the bonus).
/// spread: the partition score of allocate(), then the lowest block score minus bonus sum, then
/// the lexicographically smallest sorted block (size 1 without a required GPU: as consolidate).
/// Deterministic and independent of the order of `available` and `required`.
[[nodiscard]] result<packer_answer> allocate_with(const pair_score_matrix& scores,
                                                  std::span<const std::uint32_t> available,
                                                  std::span<const std::uint32_t> required,
                                                  std::size_t size,
                                                  const placement_preferences& prefs);

/// Free GPUs of one node carried between allocations (go-gpuallocator's Allocator).
class packer_state {
 public:
  /// Returns a state with every GPU of `scores` free.
  explicit packer_state(pair_score_matrix scores);
  /// Returns a state with the GPUs `available` free. Errors: out_of_range if one is >=
  /// scores.size(); invalid_argument if one repeats.
  [[nodiscard]] static result<packer_state> make(pair_score_matrix scores,
                                                 std::span<const std::uint32_t> available);

  /// Returns the free GPUs, ascending.
  [[nodiscard]] std::span<const std::uint32_t> available() const noexcept { return free_; }
  /// Returns the scores.
  [[nodiscard]] const pair_score_matrix& scores() const noexcept { return scores_; }

  /// Returns allocate(scores(), available(), required, size, mode) and, if it allocated, removes
  /// the chosen GPUs from available(). Errors as allocate(); the state is unchanged then.
  [[nodiscard]] result<packer_answer> allocate(std::size_t size,
                                               std::span<const std::uint32_t> required = {},
                                               packer_mode mode = packer_mode::lexmax);
  /// Returns the GPUs `gpus` to available(). Errors: out_of_range for a GPU >= scores().size(),
  /// already_exists for a GPU already free or repeated; the state is unchanged then.
  [[nodiscard]] result<void> release(std::span<const std::uint32_t> gpus);

 private:
  pair_score_matrix scores_;
  std::vector<std::uint32_t> free_;
};

}  // namespace hetsched
