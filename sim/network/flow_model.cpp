// sim/network/flow_model.cpp: progressive filling over the connected component touched by each batch of changes.
#include "sim/network/flow_model.hpp"

#include "sim/base/assert.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sim::network {

namespace {

// Below this many bytes a flow counts as done: a completion rounded up to the ns leaves at most a rounding residue.
constexpr double kDoneBytes = 1e-6;

bool later(const auto& a, const auto& b) {
  return a.at > b.at || (a.at == b.at && a.seq > b.seq);
}

}  // namespace

base::Time alpha_beta(base::Time alpha, base::Bytes n, base::Bandwidth b) {
  return alpha + base::transfer_time(n, b);
}

FlowModel::FlowModel(const topology::Topology& topo)
    : topo_(topo), link_slot_(static_cast<std::size_t>(topo.links()), -1) {}

double FlowModel::capacity_of(topology::LinkId id) const {
  const topology::Link& l = topo_.link(id);
  return l.up ? l.bandwidth.bytes_per_s : 0.0;
}

const FlowModel::Flow& FlowModel::flow(FlowId id) const {
  SIM_ASSERT(id.slot < flows_.size(), "unknown flow id");
  const Flow& f = flows_[id.slot];
  SIM_ASSERT(f.active && f.generation == id.generation, "flow id is stale: the flow has finished");
  return f;
}

bool FlowModel::is_active(FlowId id) const {
  return id.slot < flows_.size() && flows_[id.slot].active && flows_[id.slot].generation == id.generation;
}

void FlowModel::begin_change(base::Time now) {
  SIM_ASSERT(now >= last_change_, "the flow model's clock went backwards");
  if (dirty_ && now > last_change_) settle();  // the earlier batch takes effect at its own time
  last_change_ = now;
}

std::int32_t FlowModel::acquire_link(topology::LinkId id) {
  std::int32_t& slot = link_slot_[static_cast<std::size_t>(id)];
  if (slot >= 0) return slot;
  if (free_links_.empty()) {
    slot = static_cast<std::int32_t>(links_.size());
    links_.emplace_back();
  } else {
    slot = free_links_.back();
    free_links_.pop_back();
  }
  LinkState& l = links_[static_cast<std::size_t>(slot)];
  l.id = id;
  l.capacity = capacity_of(id);
  l.flows.clear();
  return slot;
}

void FlowModel::release_link(std::int32_t slot) {
  LinkState& l = links_[static_cast<std::size_t>(slot)];
  link_slot_[static_cast<std::size_t>(l.id)] = -1;
  l.id = -1;
  free_links_.push_back(slot);
}

FlowId FlowModel::start(base::Time now, std::vector<topology::LinkId> links, base::Bytes bytes) {
  begin_change(now);
  std::uint32_t slot = 0;
  if (free_flows_.empty()) {
    slot = static_cast<std::uint32_t>(flows_.size());
    flows_.emplace_back();
  } else {
    slot = free_flows_.back();
    free_flows_.pop_back();
  }
  Flow& f = flows_[slot];
  f.links.clear();
  f.remaining = static_cast<double>(std::max<std::int64_t>(bytes.n, 0));
  f.rate = 0;
  f.since = now;
  f.seq = next_seq_++;
  f.visit = 0;
  f.frozen = 0;
  ++f.version;
  f.active = true;
  ++active_;
  if (bytes.n > 0) {
    for (topology::LinkId id : links) {
      SIM_ASSERT(id >= 0 && id < topo_.links(), "flow over an unknown link");
      if (std::isinf(topo_.link(id).bandwidth.bytes_per_s)) continue;  // never limiting
      const std::int32_t ls = acquire_link(id);
      LinkState& l = links_[static_cast<std::size_t>(ls)];
      f.links.push_back({ls, static_cast<std::int32_t>(l.flows.size())});
      l.flows.push_back({static_cast<std::int32_t>(slot), static_cast<std::int32_t>(f.links.size() - 1)});
    }
  }
  if (f.links.empty()) {
    // Nothing limits it (or nothing to send): it completes now.
    f.rate = std::numeric_limits<double>::infinity();
    f.remaining = 0;
    push_completion(slot);
  } else {
    seeds_.push_back(links_[static_cast<std::size_t>(f.links.front().link)].id);
    dirty_ = true;
  }
  return FlowId{slot, f.generation};
}

void FlowModel::finish(base::Time now, FlowId id) {
  flow(id);  // checks the id
  begin_change(now);
  Flow& f = flows_[id.slot];
  for (const Incidence& inc : f.links) {
    LinkState& l = links_[static_cast<std::size_t>(inc.link)];
    const Member moved = l.flows.back();
    l.flows[static_cast<std::size_t>(inc.pos)] = moved;
    flows_[static_cast<std::size_t>(moved.flow)].links[static_cast<std::size_t>(moved.idx)].pos = inc.pos;
    l.flows.pop_back();
    if (l.flows.empty()) {
      release_link(inc.link);
    } else {
      seeds_.push_back(l.id);
      dirty_ = true;
    }
  }
  f.links.clear();
  f.active = false;
  ++f.generation;
  ++f.version;
  free_flows_.push_back(id.slot);
  --active_;
  drop_stale_completions();
}

void FlowModel::links_changed(base::Time now, std::span<const topology::LinkId> links) {
  begin_change(now);
  for (topology::LinkId id : links) {
    SIM_ASSERT(id >= 0 && id < topo_.links(), "unknown link");
    const std::int32_t slot = link_slot_[static_cast<std::size_t>(id)];
    if (slot < 0) continue;  // no active flow crosses it; new flows read its state when they start
    links_[static_cast<std::size_t>(slot)].capacity = capacity_of(id);
    seeds_.push_back(id);
    dirty_ = true;
  }
}

void FlowModel::settle() const {
  if (!dirty_) return;
  dirty_ = false;
  const base::Time now = last_change_;
  ++epoch_;
  ++stats_.reshares;

  // The connected component(s) of the changed links: breadth-first over the link-flow incidence graph.
  comp_flows_.clear();
  comp_links_.clear();
  for (topology::LinkId id : seeds_) {
    const std::int32_t ls = link_slot_[static_cast<std::size_t>(id)];
    if (ls < 0 || links_[static_cast<std::size_t>(ls)].visit == epoch_) continue;
    links_[static_cast<std::size_t>(ls)].visit = epoch_;
    comp_links_.push_back(ls);
  }
  seeds_.clear();
  for (std::size_t i = 0; i < comp_links_.size(); ++i) {
    const LinkState& l = links_[static_cast<std::size_t>(comp_links_[i])];
    for (const Member& m : l.flows) {
      Flow& f = flows_[static_cast<std::size_t>(m.flow)];
      if (f.visit == epoch_) continue;
      f.visit = epoch_;
      comp_flows_.push_back(static_cast<std::uint32_t>(m.flow));
      for (const Incidence& inc : f.links) {
        LinkState& other = links_[static_cast<std::size_t>(inc.link)];
        if (other.visit == epoch_) continue;
        other.visit = epoch_;
        comp_links_.push_back(inc.link);
      }
    }
  }

  water_fill();

  stats_.flows_rerated += comp_flows_.size();
  for (std::uint32_t slot : comp_flows_) {
    Flow& f = flows_[slot];
    if (f.new_rate == f.rate) continue;  // unchanged: its completion entry stays valid
    // Advance at the old rate up to now, then continue at the new one.
    f.remaining = std::max(0.0, f.remaining - f.rate * static_cast<double>((now - f.since).ns) * 1e-9);
    f.since = now;
    f.rate = f.new_rate;
    ++f.version;
    push_completion(slot);
  }
  drop_stale_completions();
  // Stale entries pile up under churn; rebuild when they dominate (amortised O(1) per change).
  if (completions_.size() > 2 * active_ + 1024) {
    completions_.clear();
    for (std::uint32_t s = 0; s < flows_.size(); ++s)
      if (flows_[s].active) push_completion(s);
  }
}

namespace {

bool level_less(const auto& a, const auto& b) {
  return a.share < b.share || (a.share == b.share && a.id < b.id);
}

}  // namespace

void FlowModel::level_place(std::size_t i, const Level& v) const {
  levels_[i] = v;
  links_[static_cast<std::size_t>(v.slot)].heap_pos = static_cast<std::int32_t>(i);
}

void FlowModel::level_sift_up(std::size_t i) const {
  const Level v = levels_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!level_less(v, levels_[parent])) break;
    level_place(i, levels_[parent]);
    i = parent;
  }
  level_place(i, v);
}

void FlowModel::level_sift_down(std::size_t i) const {
  const Level v = levels_[i];
  const std::size_t n = levels_.size();
  while (true) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && level_less(levels_[child + 1], levels_[child])) ++child;
    if (!level_less(levels_[child], v)) break;
    level_place(i, levels_[child]);
    i = child;
  }
  level_place(i, v);
}

void FlowModel::level_erase(std::size_t i) const {
  links_[static_cast<std::size_t>(levels_[i].slot)].heap_pos = -1;
  const Level last = levels_.back();
  levels_.pop_back();
  if (i == levels_.size()) return;
  level_place(i, last);
  level_sift_up(i);
  level_sift_down(static_cast<std::size_t>(links_[static_cast<std::size_t>(last.slot)].heap_pos));
}

// Progressive filling (water-filling) over comp_links_/comp_flows_: repeatedly take the link whose remaining capacity
// per unfrozen flow is smallest, give that share to its unfrozen flows, and charge it to their other links. An
// indexed heap keeps one entry per link, so the work is O(incidences x log links).
void FlowModel::water_fill() const {
  levels_.clear();
  for (std::int32_t ls : comp_links_) {
    LinkState& l = links_[static_cast<std::size_t>(ls)];
    l.residual = l.capacity;
    l.unfrozen = static_cast<std::int32_t>(l.flows.size());
    l.heap_pos = static_cast<std::int32_t>(levels_.size());
    levels_.push_back({l.residual / l.unfrozen, l.id, ls});
  }
  for (std::size_t i = levels_.size() / 2; i-- > 0;)
    level_sift_down(i);
  while (!levels_.empty()) {
    const Level top = levels_.front();
    level_erase(0);
    LinkState& l = links_[static_cast<std::size_t>(top.slot)];
    l.unfrozen = 0;
    for (const Member& m : l.flows) {
      Flow& f = flows_[static_cast<std::size_t>(m.flow)];
      if (f.frozen == epoch_) continue;
      f.frozen = epoch_;
      f.new_rate = top.share;
      for (const Incidence& inc : f.links) {
        LinkState& other = links_[static_cast<std::size_t>(inc.link)];
        if (other.heap_pos < 0) continue;  // the link being filled, or one already done
        other.residual -= top.share;
        if (--other.unfrozen == 0) {
          level_erase(static_cast<std::size_t>(other.heap_pos));
          continue;
        }
        const auto pos = static_cast<std::size_t>(other.heap_pos);
        levels_[pos].share = std::max(0.0, other.residual) / other.unfrozen;
        level_sift_up(pos);  // the share only grows in exact arithmetic; rounding may nudge it down
        level_sift_down(static_cast<std::size_t>(other.heap_pos));
      }
    }
  }
}

void FlowModel::push_completion(std::uint32_t slot) const {
  const Flow& f = flows_[slot];
  if (!(f.rate > 0)) return;  // stalled: no completion until something changes
  base::Time at = f.since;
  if (f.remaining > kDoneBytes && std::isfinite(f.rate)) {
    // Same expression as base::transfer_time, so that an uncontended flow takes exactly bytes / bottleneck.
    const double ns = std::ceil(f.remaining * 1e9 / f.rate);
    at = ns >= static_cast<double>((base::Time::max() - f.since).ns)
             ? base::Time::max()
             : f.since + base::Time{static_cast<std::int64_t>(ns)};
  }
  completions_.push_back({at, f.seq, slot, f.version});
  std::push_heap(completions_.begin(), completions_.end(),
                 [](const Completion& a, const Completion& b) { return later(a, b); });
}

void FlowModel::drop_stale_completions() const {
  auto cmp = [](const Completion& a, const Completion& b) { return later(a, b); };
  while (!completions_.empty()) {
    const Completion& top = completions_.front();
    const Flow& f = flows_[top.slot];
    if (f.active && f.version == top.version) return;
    std::pop_heap(completions_.begin(), completions_.end(), cmp);
    completions_.pop_back();
  }
}

std::optional<std::pair<base::Time, FlowId>> FlowModel::next_completion() const {
  settle();
  drop_stale_completions();
  if (completions_.empty()) return std::nullopt;
  const Completion& top = completions_.front();
  return std::pair{top.at, FlowId{top.slot, flows_[top.slot].generation}};
}

base::Bandwidth FlowModel::rate(FlowId id) const {
  flow(id);
  settle();
  return base::Bandwidth{flows_[id.slot].rate};
}

double FlowModel::remaining_bytes(base::Time now, FlowId id) const {
  flow(id);
  settle();
  const Flow& f = flows_[id.slot];
  SIM_ASSERT(now >= f.since, "remaining_bytes asked for a time before the flow's last change");
  if (!std::isfinite(f.rate)) return 0.0;
  return std::max(0.0, f.remaining - f.rate * static_cast<double>((now - f.since).ns) * 1e-9);
}

}  // namespace sim::network
