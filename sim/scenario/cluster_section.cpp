// sim/scenario/cluster_section.cpp: the scenario's `cluster` section, parsed strictly: size, node shape, network and
// its failed fabric elements. Seam: scenario.cpp reads the file and its other sections; this reads the cluster.
#include "sim/scenario/cluster_section.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace sim::scenario::detail {

using base::JsonReader;
using base::Range;

namespace {

/// "spine S" or "leaf L uplink P" (decimal indices, single spaces or more): a failed fabric element, or nothing.
std::optional<topology::FabricFailure> parse_fabric_failure(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text + " ") {
    if (c == ' ') {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  auto number = [](const std::string& w) -> std::optional<int> {
    if (w.empty() || w.size() > 9) return std::nullopt;
    int v = 0;
    for (char c : w) {
      if (c < '0' || c > '9') return std::nullopt;
      v = v * 10 + (c - '0');
    }
    return v;
  };
  topology::FabricFailure f;
  if (words.size() == 2 && words[0] == "spine") {
    auto i = number(words[1]);
    if (!i) return std::nullopt;
    f.kind = topology::FabricFailure::Kind::Spine;
    f.index = *i;
    return f;
  }
  if (words.size() == 4 && words[0] == "leaf" && words[2] == "uplink") {
    auto l = number(words[1]);
    auto u = number(words[3]);
    if (!l || !u) return std::nullopt;
    f.kind = topology::FabricFailure::Kind::LeafUplink;
    f.leaf = *l;
    f.index = *u;
    return f;
  }
  return std::nullopt;
}

}  // namespace

void parse_cluster(JsonReader& c, ClusterConfig& cluster, const hardware::HardwareProfile& hw, bool have_hardware) {
  c.required("gpus", cluster.gpus, Range::at_least(1));
  cluster.gpus_per_node = hw.node.gpus;
  c.optional("gpus_per_node", cluster.gpus_per_node, Range::at_least(1));
  c.optional("nvlink_domain", cluster.nvlink_domain, Range::at_least(1));
  cluster.network.nic_bandwidth = hw.network.nic_bandwidth;
  if (auto n = c.optional_object("network")) {
    if (n->optional("nic_bandwidth", cluster.network.nic_bandwidth))
      hardware::check_rate_floor(*n, "nic_bandwidth", cluster.network.nic_bandwidth);
    n->optional_enum("topology", cluster.network.topology, {"rail-fat-tree", "fat-tree"});
    n->optional("oversubscription", cluster.network.oversubscription, Range::between(1.0, 64.0));
    n->optional("nvls", cluster.network.nvls);
    std::vector<std::string> failed;
    if (n->optional("failed", failed)) {
      for (const auto& text : failed) {
        if (auto f = parse_fabric_failure(text)) {
          cluster.network.failed.push_back(*f);
        } else if (text.rfind("leaf ", 0) == 0 && text.find("uplink") == std::string::npos) {
          n->error("failed", "\"" + text +
                                 "\": a leaf switch down cuts its GPUs off the network; NCCL would carry their "
                                 "traffic over NVLink to another rail's NIC (PXN), which trainsim does not model. Fail "
                                 "its uplinks (\"leaf L uplink P\") or a spine (\"spine S\") instead");
        } else {
          n->error("failed", "\"" + text +
                                 "\" is not a fabric element; write \"spine S\" (a spine switch) or \"leaf L uplink "
                                 "P\" (leaf L's link to its spine plane P), indices from 0");
        }
      }
    }
    n->finish();
  }
  c.finish();
  if (cluster.gpus > 0 && cluster.gpus_per_node > 0 && cluster.gpus % cluster.gpus_per_node != 0 &&
      cluster.gpus > cluster.gpus_per_node)
    c.error("gpus", std::to_string(cluster.gpus) + " is not a whole number of nodes of " +
                        std::to_string(cluster.gpus_per_node) + " GPUs");
  // A node holds the profile's GPUs at most; a job that takes fewer of each (CUDA_VISIBLE_DEVICES=4,5,6,7) has that
  // share of each NVLink domain, so that tensor parallelism past it crosses the network (found by a user trial: TP 8
  // over nodes of 4 was timed on NVLink, and 16 per node of an 8-GPU profile was accepted).
  if (have_hardware && hw.node.gpus > 0 && cluster.gpus_per_node > hw.node.gpus)
    c.error("gpus_per_node", std::to_string(cluster.gpus_per_node) + " GPUs per node, but a " + hw.name +
                                 " node holds " + std::to_string(hw.node.gpus) +
                                 "; accepted: up to that many (a larger NVLink domain is cluster.nvlink_domain)");
  else if (have_hardware && hw.node.gpus > 0 && cluster.gpus_per_node < hw.node.gpus && cluster.nvlink_domain == 0)
    cluster.nvlink_domain = hw.nvlink.domain % hw.node.gpus == 0
                                ? hw.nvlink.domain / hw.node.gpus * cluster.gpus_per_node
                                : cluster.gpus_per_node;
  if (cluster.nvlink_domain > 0 && cluster.gpus_per_node > 0) {
    const int d = cluster.nvlink_domain, node = cluster.gpus_per_node;
    if (d % node != 0)
      c.error("nvlink_domain", std::to_string(d) + " is not a whole number of nodes of " + std::to_string(node) +
                                   " GPUs (gpus_per_node)");
    else if (have_hardware && d > std::max(hw.nvlink.domain, node))
      c.error("nvlink_domain", std::to_string(d) + " GPUs exceed the hardware profile's NVLink domain of " +
                                   std::to_string(std::max(hw.nvlink.domain, node)) +
                                   "; accepted: a multiple of gpus_per_node up to it (the GPUs of a domain the job "
                                   "fills before the next)");
  }
  if (have_hardware && cluster.network.nic_bandwidth.bytes_per_s <= 0)
    c.error("network", "no NIC bandwidth: the hardware profile has none; set cluster.network.nic_bandwidth");
}

}  // namespace sim::scenario::detail
