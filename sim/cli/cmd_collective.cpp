// sim/cli/cmd_collective.cpp: `trainsim collective OP --gpus N`: one collective's predicted time, algbw and busbw per
// size, printed as nccl-tests prints its measurements (issue 23), or as JSON.
#include "sim/base/quantity.hpp"
#include "sim/cli/app.hpp"
#include "sim/cli/common.hpp"
#include "sim/collectives/sweep.hpp"
#include "sim/scenario/step_setup.hpp"

#include <CLI/CLI.hpp>

#include <cctype>
#include <charconv>
#include <cstdio>
#include <memory>

namespace sim::cli {
namespace {

using collectives::Algorithm;
using collectives::Op;

struct CollectiveArgs {
  std::string op;
  int gpus = 0;
  int per_node = 0;
  std::string size, sizes = "8:8G";
  std::string algorithm = "auto";
  std::string hardware, scenario;
  bool json = false;
};

/// "1 GiB", "64 MB" (sim/base quantities), or nccl-tests' own "8", "64K", "8G" (powers of 1024, as its -b and -e).
base::Bytes parse_size(const std::string& text, const char* option) {
  std::string_view t(text);
  std::int64_t scale = 1;
  if (!t.empty()) {
    switch (std::toupper(static_cast<unsigned char>(t.back()))) {
      case 'K':
        scale = std::int64_t{1} << 10;
        break;
      case 'M':
        scale = std::int64_t{1} << 20;
        break;
      case 'G':
        scale = std::int64_t{1} << 30;
        break;
      case 'T':
        scale = std::int64_t{1} << 40;
        break;
      default:
        break;
    }
  }
  const std::string_view digits = scale == 1 ? t : t.substr(0, t.size() - 1);
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec == std::errc{} && end == digits.data() + digits.size() && !digits.empty()) {
    if (v >= 1 && v <= (std::int64_t{1} << 50) / scale) return base::Bytes{v * scale};
  } else if (auto q = base::parse_bytes(t)) {
    if (q.value->n >= 1 && q.value->n <= (std::int64_t{1} << 50)) return *q.value;
  }
  throw base::ConfigError(option, "",
                          "\"" + text +
                              "\" is not a size from 1 B to 1 PiB; write bytes (\"8\"), nccl-tests' \"64K\", "
                              "\"8G\", or a quantity (\"1 GiB\")");
}

std::vector<base::Bytes> sizes_of(const CollectiveArgs& a) {
  if (!a.size.empty()) return {parse_size(a.size, "--size")};
  const auto colon = a.sizes.find(':');
  if (colon == std::string::npos)
    throw base::ConfigError("--sizes", "", "\"" + a.sizes + "\" is not a range; write FROM:TO, e.g. 8:8G");
  const base::Bytes from = parse_size(a.sizes.substr(0, colon), "--sizes");
  const base::Bytes to = parse_size(a.sizes.substr(colon + 1), "--sizes");
  if (to < from)
    throw base::ConfigError("--sizes", "", "\"" + a.sizes + "\" ends below where it starts; write FROM:TO, FROM <= TO");
  return collectives::doubling_sizes(from, to);
}

// nccl-tests' time column: two decimals below 100 us, one below 10,000, none above (src/common.cu).
std::string time_column(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%7.*f", us < 100 ? 2 : us < 10000 ? 1 : 0, us);
  return buf;
}

// Elements per rank as nccl-tests counts them for a float buffer: the gathered and scattered ops count one rank's
// share.
std::int64_t element_count(Op op, base::Bytes n, int p) {
  const std::int64_t elems = n.n / 4;
  if (op == Op::AllGather || op == Op::ReduceScatter || op == Op::AllToAll) return elems / std::max(p, 1);
  return elems;
}

int collective_command(const CollectiveArgs& a, const Options& o, std::ostream& out) {
  const auto op = collectives::op_from_nccl_name(a.op);
  if (!op)
    throw base::ConfigError("OP", "",
                            "\"" + a.op +
                                "\" is not a collective; expected all_reduce, all_gather, reduce_scatter, "
                                "alltoall (all_to_all), broadcast or sendrecv (send_recv)");
  const auto algorithm = collectives::algorithm_from_string(a.algorithm);  // CLI11 checked the name
  auto overrides = overrides_of(o);
  if (!a.hardware.empty()) overrides.push_back({"hardware", a.hardware});
  // Without --scenario the cluster is the named profile's own (its nodes and NICs on a rail-optimised fat tree), not
  // the default scenario's eight-GPU nodes and 400 Gb/s NICs around another GPU; --set still applies on top. One node
  // of it, with a layout that fits one node (the sweep sizes the cluster for --gpus; the layout is not used).
  if (a.scenario.empty() && !a.hardware.empty()) {
    const std::string node = std::to_string(scenario::load_hardware(a.hardware).node.gpus);
    overrides.insert(overrides.begin(),
                     {{"cluster", "{\"gpus\": " + node + "}"}, {"parallel", "{\"global_batch\": " + node + "}"}});
  }
  const auto s =
      a.scenario.empty() ? scenario::load_default_scenario(overrides) : scenario::load_scenario(a.scenario, overrides);
  if (!s.cluster.network.failed.empty())
    throw base::ConfigError(s.source, "/cluster/network/failed",
                            "trainsim collective sizes a healthy cluster for --gpus; a degraded fabric is simulated by "
                            "step and run");
  // All-to-all and broadcast are replayed as one flow per pair or per destination on the topology: n^2 flows for
  // all-to-all (found by a user trial: 16,384 ranks took 6 GB and over a minute, 8,192 ranks 40 s).
  constexpr int kMaxAllToAllRanks = 4096;
  if (*op == Op::AllToAll && a.gpus > kMaxAllToAllRanks)
    throw base::ConfigError("--gpus", "",
                            std::to_string(a.gpus) +
                                " ranks: an all-to-all is replayed pair by pair (n^2 flows); at "
                                "most " +
                                std::to_string(kMaxAllToAllRanks) +
                                " ranks are accepted (expert-parallel groups are far smaller)");
  const topology::TopologyConfig config = scenario::topology_config(s);
  if (auto problems = collectives::validate_sweep_cluster(config, a.gpus, a.per_node); !problems.empty()) {
    for (auto& d : problems) {
      d.file = d.path == "/per_node" ? "--per-node" : "--gpus";
      d.path.clear();
    }
    throw base::ConfigError(std::move(problems));
  }
  const std::vector<base::Bytes> sizes = sizes_of(a);
  const auto cluster = collectives::sweep_cluster(config, a.gpus, a.per_node);
  const collectives::CallCosts costs{s.hardware.latency.base, s.hardware.latency.launch};
  auto rows = collectives::sweep(*op, *algorithm, cluster.group, sizes, costs, *cluster.topology);
  const int p = a.gpus;
  // One rank moves nothing over a link, but nccl-tests times what NCCL does then: an out-of-place copy of the buffer
  // (read and written once in HBM), at least the launch floor. It printed 0 us (a user trial).
  if (p == 1)
    for (auto& r : rows) {
      const double copy_s = 2.0 * static_cast<double>(r.size.n) / s.hardware.gpu.hbm_bandwidth.bytes_per_s;
      r.time = std::max(base::Time::from_seconds(copy_s), s.hardware.latency.launch);
      r.algbw = {r.time > base::Time::zero() ? static_cast<double>(r.size.n) / r.time.seconds() : 0.0};
      r.busbw = {};
      r.launch_bound = r.time == s.hardware.latency.launch && r.time > base::Time::zero();
    }
  // Nodes are filled in order, as mpirun fills its slots: the last node may hold fewer ranks (12 ranks on 8-GPU nodes
  // are 8 + 4). The header said "2 nodes x 6", a layout it had not simulated (a user trial).
  const int per_node = a.per_node > 0 ? a.per_node : std::min(p, config.gpus_per_node);
  const int on_last = p - (cluster.nodes - 1) * per_node;
  // All-to-all, send/receive and broadcast are timed as direct transfers (every pair, or root to each), with no
  // algorithm or protocol chosen: name that, not the cost model's default ring / LL.
  const bool direct = *op == Op::AllToAll || *op == Op::SendRecv || *op == Op::Broadcast;
  // An algorithm asked for that cannot run the operation is refused, as NCCL refuses an NCCL_ALGO it cannot use; it was
  // replaced by a ring without a word (a user trial).
  if (*algorithm != collectives::Algorithm::Auto && p >= 2) {
    if (direct)
      throw base::ConfigError("--algorithm", "",
                              "\"" + a.algorithm + "\": " + collectives::nccl_name(*op) +
                                  " is timed as direct transfers, with no algorithm to choose; leave --algorithm auto");
    for (const auto& r : rows) {
      if (r.size.n <= 0 || r.algorithm == *algorithm) continue;
      const std::string why =
          *algorithm == collectives::Algorithm::Tree ? "the tree runs all-reduce only"
          : *algorithm == collectives::Algorithm::Nvls
              ? "NVLink SHARP runs all-reduce only, where the profile's and cluster's NVLink switches reduce (nvls), "
                "on one NVLink domain or on the same number (two or more) of ranks in each"
              : "it needs two or more nodes with the same number (two or more) of ranks each";
      throw base::ConfigError("--algorithm", "",
                              "\"" + a.algorithm + "\" does not apply to " + collectives::nccl_name(*op) + " over " +
                                  std::to_string(p) + " ranks (" + why + "); use ring or auto");
    }
  }
  auto algorithm_name = [&](const collectives::SweepRow& r) {
    if (p == 1) return std::string("copy");
    return direct ? std::string("direct") : std::string(collectives::to_string(r.algorithm));
  };
  auto protocol_name = [&](const collectives::SweepRow& r) {
    return direct || p == 1 ? std::string("-") : std::string(collectives::to_string(r.protocol));
  };

  if (a.json || o.format == "json") {
    results::Json j = results::Json::object();
    j["schema"] = "trainsim.collective/1";
    j["op"] = collectives::nccl_name(*op);
    j["ranks"] = p;
    j["nodes"] = cluster.nodes;
    j["ranks_per_node"] = per_node;
    j["ranks_on_last_node"] = on_last;
    j["hardware"] = s.hardware.name;
    j["algorithm"] = a.algorithm;
    j["base_latency_us"] = static_cast<double>(s.hardware.latency.base[static_cast<std::size_t>(*op)].ns) / 1e3;
    j["launch_us"] = static_cast<double>(s.hardware.latency.launch.ns) / 1e3;
    results::Json arr = results::Json::array();
    for (const auto& r : rows) {
      results::Json row = results::Json::object();
      row["size_bytes"] = r.size.n;
      row["count"] = element_count(*op, r.size, p);
      row["algorithm"] = algorithm_name(r);
      row["protocol"] = protocol_name(r);
      row["time_us"] = static_cast<double>(r.time.ns) / 1e3;
      row["algbw_gbps"] = r.algbw.gbytes_per_s();
      row["busbw_gbps"] = r.busbw.gbytes_per_s();
      row["launch_bound"] = r.launch_bound;
      arr.push_back(std::move(row));
    }
    j["rows"] = std::move(arr);
    out << j.dump() << '\n';
    return kExitOk;
  }

  out << "# trainsim collective: " << collectives::nccl_name(*op) << " over " << p << " rank" << (p == 1 ? "" : "s")
      << " ("
      << (on_last == per_node ? std::to_string(cluster.nodes) + " node" + (cluster.nodes == 1 ? "" : "s") + " x " +
                                    std::to_string(per_node)
                              : std::to_string(cluster.nodes) + " nodes: " + std::to_string(cluster.nodes - 1) + " x " +
                                    std::to_string(per_node) + " and the last with " + std::to_string(on_last))
      << "), " << s.hardware.name << ", algorithm " << a.algorithm << "; predicted, not measured\n";
  // The profile's call costs, where it has any (hardware profile section "latency"), so a time can be traced to them.
  const base::Time op_base = s.hardware.latency.base[static_cast<std::size_t>(*op)];
  if (op_base > base::Time::zero() || s.hardware.latency.launch > base::Time::zero())
    out << "# call costs: latency.base." << collectives::nccl_name(*op) << " "
        << fmt(static_cast<double>(op_base.ns) / 1e3, 2) << " us added to each call, latency.launch "
        << fmt(static_cast<double>(s.hardware.latency.launch.ns) / 1e3, 2)
        << " us a floor (the host's issue time for back-to-back calls)\n";
  if (p == 1)
    out << "# one rank: no link is used; the time is NCCL's out-of-place copy of the buffer at " << s.hardware.gpu.model
        << "'s HBM bandwidth (read and write), which nccl-tests times; bus bandwidth 0\n";
  out << "#\n";
  out << "#                                                              predicted\n"
         "#       size         count      type   redop    root     time   algbw   busbw  algorithm  protocol\n"
         "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)\n";
  const bool reduces = *op == Op::AllReduce || *op == Op::ReduceScatter;
  double sum_busbw = 0;
  for (const auto& r : rows) {
    char line[160];
    std::snprintf(line, sizeof line, "%12lld  %12lld  %8s  %6s  %6d  %7s  %6.2f  %6.2f  %-12s %s%s\n",
                  static_cast<long long>(r.size.n), static_cast<long long>(element_count(*op, r.size, p)), "float",
                  reduces ? "sum" : "none", *op == Op::Broadcast ? 0 : -1,
                  time_column(static_cast<double>(r.time.ns) / 1e3).c_str(), r.algbw.gbytes_per_s(),
                  r.busbw.gbytes_per_s(), algorithm_name(r).c_str(), protocol_name(r).c_str(),
                  r.launch_bound ? " (launch-bound)" : "");
    out << line;
    sum_busbw += r.busbw.gbytes_per_s();
  }
  out << "# Avg bus bandwidth    : " << fmt(rows.empty() ? 0.0 : sum_busbw / static_cast<double>(rows.size()), 3)
      << "\n#\n";
  return kExitOk;
}

}  // namespace

void add_collective_command(CLI::App& app, const Options& o, CommandList& commands) {
  auto* cmd = app.add_subcommand("collective",
                                 "One collective's predicted time, algbw and busbw per size, in nccl-tests' layout");
  auto a = std::make_shared<CollectiveArgs>();
  cmd->add_option("op", a->op,
                  "all_reduce, all_gather, reduce_scatter, alltoall (all_to_all), broadcast or sendrecv (send_recv): "
                  "nccl-tests' names, or trainsim-calibrate's")
      ->required();
  cmd->add_option("--gpus", a->gpus, "Ranks taking part")
      ->required()
      ->check(CLI::Range(1, collectives::kMaxSweepRanks));
  cmd->add_option("--per-node", a->per_node,
                  "Ranks on each node (default: the node's GPUs; nccl-tests' ranks per host)")
      ->check(CLI::Range(1, 1024));
  auto* size = cmd->add_option("--size", a->size, "One message size: 1048576, 64K, 8G or \"1 GiB\"");
  cmd->add_option("--sizes", a->sizes, "Sizes FROM:TO doubling, as nccl-tests -b FROM -e TO -f 2")
      ->capture_default_str()
      ->excludes(size);
  cmd->add_option("--algorithm", a->algorithm, "Algorithm (auto: the fastest predicted, see docs/validation.md)")
      ->check(CLI::IsMember({"auto", "ring", "tree", "hierarchical", "nvls"}))
      ->capture_default_str();
  cmd->add_option("--hardware", a->hardware, "Hardware profile: a built-in name or a file (default: the scenario's)");
  cmd->add_option("--scenario", a->scenario, "Scenario whose cluster (NVLink domain, rails, oversubscription) is used");
  cmd->add_flag("--json", a->json, "JSON output (schema trainsim.collective/1), same as --format json");
  commands.push_back({cmd, [a, &o](std::ostream& out, std::ostream&) { return collective_command(*a, o, out); }});
}

}  // namespace sim::cli
