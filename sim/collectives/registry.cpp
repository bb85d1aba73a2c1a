// sim/collectives/registry.cpp: the built-in collective algorithms and their descriptions.
#include "sim/collectives/registry.hpp"

#include "sim/base/assert.hpp"

namespace sim::collectives {

void Registry::add(std::string name, std::string description, Algorithm algorithm) {
  SIM_ASSERT(find(name) == nullptr, "collective algorithm registered twice");
  entries_.push_back({std::move(name), std::move(description), algorithm});
}

const AlgorithmInfo* Registry::find(std::string_view name) const {
  for (const AlgorithmInfo& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

void register_builtin_algorithms(Registry& r) {
  r.add("ring",
        "Bandwidth-optimal ring through the group, NVLink domain by domain: 2(p-1)a + 2(p-1)/p n/B for all-reduce "
        "(Thakur, Rabenseifner, Gropp 2005)",
        Algorithm::Ring);
  r.add("tree",
        "NCCL double binary tree, all-reduce only: 2 ceil(log2 p) a + 2n/B, logarithmic latency at full bandwidth "
        "(Sanders, Speck, Traeff 2009; NCCL 2.4)",
        Algorithm::Tree);
  r.add("hierarchical",
        "Reduce-scatter over NVLink, all-reduce of n/k across domains on k rails in parallel, all-gather over NVLink",
        Algorithm::Hierarchical);
  r.add("auto",
        "The fastest applicable algorithm by predicted time for the op, group and size, as NCCL's tuner picks; every "
        "ring, tree and hierarchical collective runs its fastest NCCL protocol (LL, LL128, Simple: step latency, "
        "fixed cost, bandwidth fraction); NVLS runs Simple",
        Algorithm::Auto);
  r.add("nvls",
        "NVLink SHARP all-reduce where the profile's nvlink.sharp says the NVSwitches reduce (NCCL 2.17+, H100 and "
        "later): in one domain of k, 2a + n (k+1)/k / B_nvls (NCCL's NVLS); over k ranks in each of m domains, that "
        "and k trees across the domains at once (NCCL's NVLS_TREE; auto takes it over 2 domains only)",
        Algorithm::Nvls);
}

std::vector<std::pair<std::string, std::string>> describe_algorithms() {
  Registry r;
  register_builtin_algorithms(r);
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(r.entries().size());
  for (const AlgorithmInfo& e : r.entries())
    out.emplace_back(e.name, e.description);
  return out;
}

}  // namespace sim::collectives
