// sim/scenario/step_setup.cpp: composition of model, hardware, cluster and parallel strategy for the step level.
#include "sim/scenario/step_setup.hpp"

#include "sim/base/errors.hpp"

namespace sim::scenario {

topology::TopologyConfig topology_config(const Scenario& s) {
  const auto& hw = s.hardware;
  topology::TopologyConfig t;
  t.gpus = s.cluster.gpus;
  t.gpus_per_node = s.cluster.gpus_per_node;
  t.nvlink_domain = std::max(hw.nvlink.domain, s.cluster.gpus_per_node);
  t.nvlink_bw = base::Bandwidth{hw.nvlink.bandwidth.bytes_per_s * hw.efficiency.nvlink};
  t.nics_per_gpu = hw.network.nics_per_gpu;
  t.nic_bw = base::Bandwidth{s.cluster.network.nic_bandwidth.bytes_per_s * hw.efficiency.network};
  t.kind = s.cluster.network.topology == "fat-tree" ? topology::TopologyConfig::Kind::FatTree
                                                    : topology::TopologyConfig::Kind::RailFatTree;
  t.oversubscription = s.cluster.network.oversubscription;
  return t;
}

StepSetup step_setup(const Scenario& s) {
  const parallel::ClusterShape shape{s.cluster.gpus, s.cluster.gpus_per_node,
                                     std::max(s.hardware.nvlink.domain, s.cluster.gpus_per_node)};
  auto resolved = parallel::resolve_layout(s.model, shape, s.parallel, s.training.seq_len);
  if (auto* bad = std::get_if<std::vector<parallel::Infeasible>>(&resolved)) return *bad;
  execution::StepInputs in;
  in.model = &s.model;
  in.hardware = &s.hardware;
  in.parallel = s.parallel;
  in.layout = std::get<parallel::Layout>(resolved);
  in.seq_len = s.training.seq_len;
  in.dtype = s.training.dtype;
  try {
    in.topology = std::make_shared<const topology::Topology>(topology_config(s));
  } catch (const base::ConfigError& e) {
    // The topology reports its own field names; say which scenario and section they came from.
    std::vector<base::Diagnostic> items;
    for (const auto& d : e.items())
      items.push_back({s.source, "/cluster", "topology field " + d.path + ": " + d.message});
    throw base::ConfigError(std::move(items));
  }
  in.flash_attention = parallel::default_flash_attention(s.model);
  in.dropout = parallel::default_dropout(s.model);
  return in;
}

results::MemoryGib memory_gib(const Scenario& s, const parallel::Layout& layout) {
  const auto m = parallel::peak_memory(s.model, layout, s.parallel, s.training.seq_len);
  results::MemoryGib g;
  g.params = m.params.gib();
  g.grads = m.grads.gib();
  g.optimizer = m.optimizer.gib();
  g.activations = m.activations.gib();
  g.buffers = m.buffers.gib();
  g.total = m.total.gib();
  g.capacity = s.hardware.gpu.hbm.gib();
  return g;
}

}  // namespace sim::scenario
