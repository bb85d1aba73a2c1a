// sim/network/flow_model.hpp: max-min fair bandwidth sharing among active flows; the caller owns time.
#pragma once
#include "sim/base/units.hpp"
#include "sim/topology/topology.hpp"

#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace sim::network {

/// A handle to one flow; stale once the flow is finished (its slot is reused with a new generation).
struct FlowId {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
  auto operator<=>(const FlowId&) const = default;
};

/// The alpha-beta (Hockney) cost of one message: T = alpha + n / B, the bandwidth term rounded up to whole ns.
/// Source: R. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2", Parallel Computing 1994.
base::Time alpha_beta(base::Time alpha, base::Bytes n, base::Bandwidth b);

/// Flow-level network model (the SimGrid approach: fluid flows, not packets). Each active flow crosses a list of
/// links; the rates are max-min fair: progressive filling raises every flow's rate together, freezing the flows of a
/// link when it saturates (Bertsekas and Gallager, "Data Networks", 2nd ed. 1992, sec. 6.5.2). A link's capacity is
/// its bandwidth, or 0 while it is down (its flows stall). Links with unlimited bandwidth (PCIe) are ignored.
///
/// The model knows nothing of the event engine: the caller tells it the time of each change and asks when the next
/// flow completes. Latency (alpha) is not modelled here: add Topology::path_latency() around the flow.
///
/// Changing the flow set at time `now` first advances the remaining bytes of the flows whose rates change at their
/// old rates (flows whose rates do not change need no update: their completion times stay valid), then re-shares
/// only the connected component of flows that share links, directly or transitively, with the change. Changes at
/// the same instant are batched: the rates are recomputed once, at the first query (next_completion(), rate(),
/// remaining()) or at the first change at a later time. The queries are logically const; they may settle pending
/// changes, so a FlowModel must not be shared between threads.
class FlowModel {
 public:
  /// `topo` must outlive the model; the model reads link bandwidths and up/down states from it.
  explicit FlowModel(const topology::Topology& topo);

  /// Starts a flow of `bytes` over `links` (e.g. Topology::path()) at `now`. A flow with no limiting link or no bytes
  /// completes at `now`. `now` never goes backwards across calls.
  FlowId start(base::Time now, std::vector<topology::LinkId> links, base::Bytes bytes);
  /// Removes a flow: the caller calls it when the flow completes (or to cancel it).
  void finish(base::Time now, FlowId id);
  /// Re-reads the up/down state of these links from the topology (after Topology::set_link_up) and re-shares the flows
  /// that cross them.
  void links_changed(base::Time now, std::span<const topology::LinkId> links);

  /// The earliest completion at the current rates, rounded up to whole ns (E1); ties go to the flow started first.
  /// Empty when no active flow is making progress.
  std::optional<std::pair<base::Time, FlowId>> next_completion() const;
  base::Bandwidth rate(FlowId id) const;
  /// Bytes left at `now` (>= the time of the last change) at the current rates.
  double remaining_bytes(base::Time now, FlowId id) const;
  std::size_t active() const { return active_; }
  bool is_active(FlowId id) const;

  /// Work counters, for benchmarks: how many re-shares ran and how many flows they re-rated in total.
  struct Stats {
    std::uint64_t reshares = 0;
    std::uint64_t flows_rerated = 0;
  };
  Stats stats() const { return stats_; }

 private:
  struct Incidence {
    std::int32_t link;  // slot in links_
    std::int32_t pos;   // index in that link's flow list
  };
  struct Member {
    std::int32_t flow;  // slot in flows_
    std::int32_t idx;   // index in that flow's incidence list
  };
  struct Flow {
    std::vector<Incidence> links;
    double remaining = 0;  // bytes at `since`
    double rate = 0;       // bytes/s
    double new_rate = 0;   // water-filling scratch
    base::Time since;
    std::uint64_t seq = 0;  // start order, for ties
    std::uint32_t generation = 0;
    std::uint32_t version = 0;  // bumped whenever the completion time changes: invalidates heap entries
    std::uint32_t visit = 0;    // epoch of the last component search that reached it
    std::uint32_t frozen = 0;   // epoch in which water-filling fixed its rate
    bool active = false;
  };
  struct LinkState {
    topology::LinkId id = -1;
    double capacity = 0;
    std::vector<Member> flows;
    double residual = 0;         // water-filling scratch: capacity not yet given to frozen flows
    std::int32_t unfrozen = 0;   // flows on it whose rate is not fixed yet
    std::int32_t heap_pos = -1;  // position in levels_, -1 when not in it
    std::uint32_t visit = 0;
  };
  struct Completion {
    base::Time at;
    std::uint64_t seq;
    std::uint32_t slot;
    std::uint32_t version;
  };
  struct Level {  // a link's fair share of its residual capacity: residual / unfrozen
    double share;
    topology::LinkId id;  // ties broken by link id, for determinism
    std::int32_t slot;
  };

  void begin_change(base::Time now);
  void settle() const;
  void water_fill() const;
  // An indexed binary min-heap of Level on (share, id); each link in it at most once, at links_[slot].heap_pos.
  void level_place(std::size_t i, const Level& v) const;
  void level_sift_up(std::size_t i) const;
  void level_sift_down(std::size_t i) const;
  void level_erase(std::size_t i) const;
  void push_completion(std::uint32_t slot) const;
  void drop_stale_completions() const;
  std::int32_t acquire_link(topology::LinkId id);
  void release_link(std::int32_t slot);
  double capacity_of(topology::LinkId id) const;
  const Flow& flow(FlowId id) const;

  const topology::Topology& topo_;
  base::Time last_change_;
  std::size_t active_ = 0;
  std::uint64_t next_seq_ = 0;
  std::vector<std::int32_t> link_slot_;  // LinkId -> slot in links_, or -1 while no active flow crosses it
  std::vector<std::int32_t> free_links_;
  std::vector<std::uint32_t> free_flows_;
  // Lazily settled state: mutated by the logically-const queries through settle().
  mutable std::vector<Flow> flows_;
  mutable std::vector<LinkState> links_;
  mutable std::vector<topology::LinkId> seeds_;  // links whose flows must be re-shared at the next settle
  mutable bool dirty_ = false;
  mutable std::uint32_t epoch_ = 0;
  mutable std::vector<Completion> completions_;  // min-heap on (at, seq), with stale entries skipped lazily
  mutable std::vector<std::uint32_t> comp_flows_;
  mutable std::vector<std::int32_t> comp_links_;
  mutable std::vector<Level> levels_;  // the water-filling heap
  mutable Stats stats_;
};

}  // namespace sim::network
