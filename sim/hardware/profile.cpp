// sim/hardware/profile.cpp: strict parsing of hardware profiles and their failure components.
#include "sim/hardware/profile.hpp"

#include "sim/base/quantity.hpp"

#include <algorithm>
#include <set>

namespace sim::hardware {

using base::JsonReader;
using base::Range;

const char* to_string(Dtype d) {
  switch (d) {
    case Dtype::Fp32:
      return "fp32";
    case Dtype::Tf32:
      return "tf32";
    case Dtype::Bf16:
      return "bf16";
    case Dtype::Fp16:
      return "fp16";
    case Dtype::Fp8:
      return "fp8";
    case Dtype::Fp4:
      return "fp4";
  }
  return "?";
}

std::optional<Dtype> dtype_from_string(std::string_view s) {
  for (Dtype d : kAllDtypes)
    if (s == to_string(d)) return d;
  return std::nullopt;
}

const char* to_string(FailureScope s) {
  switch (s) {
    case FailureScope::Gpu:
      return "gpu";
    case FailureScope::Node:
      return "node";
    case FailureScope::Rack:
      return "rack";
    case FailureScope::Switch:
      return "switch";
    case FailureScope::Job:
      return "job";
  }
  return "?";
}

const char* to_string(FailureEffect e) {
  switch (e) {
    case FailureEffect::Crash:
      return "crash";
    case FailureEffect::Hang:
      return "hang";
    case FailureEffect::Sdc:
      return "sdc";
    case FailureEffect::Straggler:
      return "straggler";
    case FailureEffect::Maintenance:
      return "maintenance";
    case FailureEffect::LossSpike:
      return "loss_spike";
  }
  return "?";
}

void check_failure_components(JsonReader& in, std::string_view key, const std::vector<FailureComponentSpec>& c) {
  if (c.size() > kMaxFailureComponents) {
    in.error(key, "lists " + std::to_string(c.size()) + " components; at most " +
                      std::to_string(kMaxFailureComponents) + " are accepted");
    return;
  }
  std::set<std::string_view> seen, reported;
  for (const auto& x : c)
    if (!seen.insert(x.name).second && reported.insert(x.name).second)
      in.error(key, "\"" + x.name + "\" appears twice; each component needs a name of its own");
}

FailureComponentSpec FailureComponentSpec::parse(JsonReader& in) {
  FailureComponentSpec c;
  // Checked here, where the reader knows the key's full path (a review: the run level's check named /components/0).
  if (in.required("name", c.name) && c.name.empty()) in.error("name", "must not be empty: it names the report's row");
  std::string scope;
  if (in.required_enum("scope", scope, {"gpu", "node", "rack", "switch", "job"})) {
    for (auto s : {FailureScope::Gpu, FailureScope::Node, FailureScope::Rack, FailureScope::Switch, FailureScope::Job})
      if (scope == to_string(s)) c.scope = s;
  }
  // Under a second no failure process of a real fleet; a run with such a component never finishes, and its counts
  // read as if little had happened (a tester's trial: "1 ns", 1 interruption, 0 GPU-hours lost).
  if (in.required("mtbf", c.mtbf) && c.mtbf.s > 0 && c.mtbf.s < 1.0)
    in.error("mtbf",
             "is under one second; an MTBF is at least \"1 s\" (a component failing faster never lets a job run)");
  in.accept("distribution");
  if (in.kind("distribution") == JsonReader::Kind::Object) {
    if (auto dist = in.required_object("distribution")) {
      if (auto w = dist->required_object("weibull")) {
        w->required("shape", c.weibull_shape, Range::between(0.05, 20.0));
        w->finish();
        c.exponential = false;
      }
      dist->finish();
    }
  } else {
    std::string dist;
    in.optional_enum("distribution", dist, {"exponential"});
  }
  std::string effect;
  if (in.required_enum("effect", effect, {"crash", "hang", "sdc", "straggler", "maintenance", "loss_spike"})) {
    for (auto e : {FailureEffect::Crash, FailureEffect::Hang, FailureEffect::Sdc, FailureEffect::Straggler,
                   FailureEffect::Maintenance, FailureEffect::LossSpike})
      if (effect == to_string(e)) c.effect = e;
  }
  // A part that takes nodes out says for how long: a silent 0 h sized the spare pool to nothing and cost no degraded
  // time (a user trial). Job-scope failures take no node out.
  if (c.scope == FailureScope::Job || c.effect == FailureEffect::LossSpike || in.has("repair"))
    in.optional("repair", c.repair, base::Sign::NonNegative);
  else if (in.has("scope"))
    in.error("repair", "is required for a " + std::string(to_string(c.scope)) +
                           "-scope component: how long its nodes stay out for repair (\"0 h\" if a restart is all "
                           "it needs)");
  in.finish();
  return c;
}

LatencySpec LatencySpec::parse(JsonReader& in) {
  LatencySpec l;
  base::Time t;
  if (in.optional("nvlink", t, base::Sign::NonNegative)) l.nvlink = t;
  if (in.optional("network_hop", t, base::Sign::NonNegative)) l.network_hop = t;
  in.optional("launch", l.launch, base::Sign::NonNegative);
  if (auto b = in.optional_object("base")) {
    for (std::size_t i = 0; i < kCollectiveNames.size(); ++i)
      b->optional(kCollectiveNames[i], l.base[i], base::Sign::NonNegative);
    b->finish();
  }
  in.finish();
  return l;
}

std::optional<base::Time> LatencySpec::field(std::string_view key) const {
  if (key == "nvlink") return nvlink;
  if (key == "network_hop") return network_hop;
  if (key == "launch") return launch;
  for (std::size_t i = 0; i < kCollectiveNames.size(); ++i)
    if (key.starts_with("base.") && key.substr(5) == kCollectiveNames[i]) return base[i];
  return std::nullopt;
}

namespace {

// The floors the arithmetic needs: Time is integer nanoseconds and Bytes an int64, so at one byte per nanosecond
// (1 GB/s) every byte count moves in a representable time (2^63 B in 2^63 ns, 292 years), and at one FLOP per
// nanosecond (1 GFLOP/s) every kernel of fewer than 2^63 FLOPs does. Slower rates (1 FLOP/s, 1 bit/s, denormals)
// overflow the clock inside the step simulation; no GPU or link of the last twenty years is that slow.
constexpr double kMinBytesPerS = 1e9;
constexpr double kMinFlopsPerS = 1e9;

}  // namespace

void check_rate_floor(JsonReader& in, std::string_view key, base::Bandwidth b) {
  if (b.bytes_per_s > 0 && b.bytes_per_s < kMinBytesPerS)
    in.error(key, base::format_bandwidth(b) +
                      " is below the slowest link trainsim simulates, 1 GB/s (8 Gbit/s: one "
                      "byte per nanosecond, so that every transfer fits the clock)");
}

void check_rate_floor(JsonReader& in, std::string_view key, base::FlopRate r) {
  if (r.flops_per_s > 0 && r.flops_per_s < kMinFlopsPerS)
    in.error(key, base::format_flop_rate(r) +
                      " is below the slowest GPU trainsim simulates, 1 GFLOP/s (one FLOP "
                      "per nanosecond, so that every kernel fits the clock)");
}

HardwareProfile HardwareProfile::parse(JsonReader& in) {
  HardwareProfile p;
  std::string schema;
  if (in.optional("schema", schema) && schema != "trainsim.hardware/1")
    in.error("schema", "\"" + schema + "\" is not a hardware schema; expected \"trainsim.hardware/1\"");
  in.required("name", p.name);
  in.optional("description", p.description);
  if (auto gpu = in.required_object("gpu")) {
    gpu->optional("model", p.gpu.model);
    if (auto peak = gpu->required_object("peak")) {
      for (Dtype d : kAllDtypes) {
        base::FlopRate r;
        if (peak->optional(to_string(d), r)) p.gpu.peak[d] = r;
        check_rate_floor(*peak, to_string(d), r);
      }
      peak->finish();
      if (!p.gpu.peak.contains(Dtype::Bf16) && !p.gpu.peak.contains(Dtype::Fp16) && in.diagnostics().empty())
        peak->error("needs at least a bf16 or fp16 peak");
    }
    gpu->required("hbm", p.gpu.hbm);
    gpu->required("hbm_bandwidth", p.gpu.hbm_bandwidth);
    check_rate_floor(*gpu, "hbm_bandwidth", p.gpu.hbm_bandwidth);
    gpu->required("sm_count", p.gpu.sm_count, Range::at_least(1));
    gpu->optional("tdp", p.gpu.tdp);
    gpu->finish();
  }
  if (auto nv = in.required_object("nvlink")) {
    nv->required("bandwidth", p.nvlink.bandwidth);
    check_rate_floor(*nv, "bandwidth", p.nvlink.bandwidth);
    nv->required("domain", p.nvlink.domain, Range::at_least(1));
    nv->optional("sharp", p.nvlink.sharp);
    nv->finish();
  }
  if (auto net = in.required_object("network")) {
    net->optional("nics_per_gpu", p.network.nics_per_gpu, Range::at_least(1));
    net->required("nic_bandwidth", p.network.nic_bandwidth);
    check_rate_floor(*net, "nic_bandwidth", p.network.nic_bandwidth);
    net->finish();
  }
  if (auto node = in.required_object("node")) {
    node->required("gpus", p.node.gpus, Range::at_least(1));
    node->optional("power", p.node.power);
    node->finish();
  }
  if (auto price = in.optional_object("price")) {
    PriceSpec ps;
    price->required("gpu_hour", ps.gpu_hour);
    price->optional_enum("kind", ps.kind, {"on-demand", "reserved", "spot", "list"});
    price->optional("date", ps.date);
    price->finish();
    p.price = ps;
  }
  if (auto eff = in.optional_object("efficiency")) p.efficiency = Efficiency::parse(*eff);
  if (auto lat = in.optional_object("latency")) p.latency = LatencySpec::parse(*lat);
  if (auto failures = in.optional_object("failures")) {
    for (auto& c : failures->object_array("components", true))
      p.failures.push_back(FailureComponentSpec::parse(c));
    check_failure_components(*failures, "components", p.failures);
    failures->finish();
  }
  if (auto prov = in.optional_object("provenance")) {
    for (const auto& k : prov->keys()) {
      std::string text;
      if (prov->required(k, text)) p.provenance[k] = text;
    }
  }
  in.finish();
  if (p.nvlink.domain > 0 && p.node.gpus > 0 && p.nvlink.domain % p.node.gpus != 0)
    in.error("nvlink", "domain = " + std::to_string(p.nvlink.domain) + " is not a whole number of nodes of " +
                           std::to_string(p.node.gpus) + " GPUs");
  return p;
}

std::vector<std::string> provenance_gaps(const std::vector<std::string>& leaves,
                                         const std::map<std::string, std::string>& provenance) {
  static constexpr std::array kExempt{"schema", "name", "description", "gpu.model"};
  std::vector<std::string> gaps;
  for (const auto& leaf : leaves) {
    if (leaf.starts_with("provenance")) continue;
    if (std::find(kExempt.begin(), kExempt.end(), leaf) != kExempt.end()) continue;
    bool covered = false;
    for (const auto& [key, source] : provenance) {
      if (source.empty()) continue;
      if (leaf == key || (leaf.size() > key.size() && leaf.starts_with(key) && leaf[key.size()] == '.')) {
        covered = true;
        break;
      }
    }
    if (!covered) gaps.push_back(leaf);
  }
  return gaps;
}

}  // namespace sim::hardware
