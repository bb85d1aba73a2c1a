// sim/execution/kernel_table.cpp: the per-kernel rows of kernel_table.hpp, timed by the step plan's own functions.
#include "sim/execution/kernel_table.hpp"

#include "sim/collectives/collective.hpp"
#include "sim/execution/cp_overlap.hpp"
#include "sim/execution/layer_timing.hpp"
#include "sim/execution/recompute.hpp"
#include "sim/execution/tp_overlap.hpp"

namespace sim::execution {

namespace {

const char* kind_name(const workload::Kernel& k) {
  switch (k.kind) {
    case workload::KernelKind::Gemm:
      return k.fp8 ? "gemm_fp8" : "gemm";
    case workload::KernelKind::Attention:
      return "attention";
    case workload::KernelKind::Memory:
      return "memory";
  }
  return "memory";
}

}  // namespace

std::vector<KernelRow> kernel_table(const StepInputs& in) {
  const workload::ModelSpec& model = *in.model;
  const workload::LayerShape shape = layer_shape(in);
  const auto modules = recompute_set(in.parallel.recompute_modules);
  const parallel::Placement placement(in.layout, in.parallel.order);
  collectives::CollectiveCostModel cost(*in.topology);
  auto kernel = [&](const workload::Kernel& k) { return kernel_time(in, k); };

  std::vector<KernelRow> rows;
  auto add_pass = [&](const char* part, const char* pass, const workload::PassWork& p, bool backward) {
    for (std::size_t i = 0; i < p.segments.size(); ++i) {
      const auto& s = p.segments[i];
      if (!s.is_comm) {
        for (const auto& k : s.kernels) {
          KernelRow r;
          r.part = part;
          r.pass = pass;
          r.name = k.name;
          r.kind = kind_name(k);
          r.m = k.m;
          r.n = k.n;
          r.k = k.k;
          r.batch = k.batch;
          r.flops = k.kind == workload::KernelKind::Gemm ? 2 * k.m * k.n * k.k * k.batch : k.flops;
          r.bytes = k.kind == workload::KernelKind::Memory ? k.bytes : 0.0;
          r.time = r.exposed = kernel(k);
          rows.push_back(std::move(r));
        }
        continue;
      }
      const auto [op, dim] = layer_collective(s.comm);
      const auto group = placement.group(dim, 0);
      KernelRow r;
      r.part = part;
      r.pass = pass;
      r.name = s.label;
      r.kind = collectives::to_string(op);
      r.bytes = s.comm_bytes;
      r.group = static_cast<int>(group.size());
      if (group.size() > 1) {
        const double n = layer_collective_payload(in, s.comm, group, s.comm_bytes);
        r.time = cost.time(op, collectives::Algorithm::Auto, group, base::Bytes{static_cast<std::int64_t>(n + 0.5)});
      }
      r.exposed = r.time;
      if (in.parallel.tp_comm_overlap)
        if (const auto e = tp_overlap_exposed(p, i, backward, r.time, in.layout.tp, in.hardware->gpu.sm_count, kernel,
                                              in.parallel.tp_comm_overlap_method))
          r.exposed = *e;
      // Context parallelism's ring (cp_comm_type "p2p", the default) runs beside the attention it feeds, as the step
      // times it (step_planner.hpp, cp_overlap.hpp); a user trial found this table calling it all exposed.
      if (s.comm == workload::CommKind::CpExchange && in.parallel.cp_comm_type == parallel::CpCommType::P2p)
        r.exposed = cp_ring_exposed(p, i, r.exposed, in.layout.cp, kernel);
      rows.push_back(std::move(r));
    }
  };
  auto add_work = [&](const char* part, const workload::LayerWork& w) {
    add_pass(part, "forward", w.forward, false);
    add_pass(part, "recompute", w.recompute, false);
    add_pass(part, "backward", w.backward_input, true);
    add_pass(part, "wgrad", w.backward_weight, false);
  };
  // An MoE model with dense layers (first_k_dense, layer_freq; DeepSeek-V3's first three) runs the dense MLP there:
  // its layer first, as "dense_layer" (a user trial matched the MoE rows against a profile of layer 0).
  if (model.moe && model.moe_layers() < model.layers)
    add_work("dense_layer",
             workload::layer_work(model.dense_variant(), shape, recompute_mode(in.parallel.recompute), modules));
  add_work("layer", workload::layer_work(model, shape, recompute_mode(in.parallel.recompute), modules));
  add_work("embedding", workload::embedding_work(model, shape));
  add_work("output", workload::output_work(model, shape));
  return rows;
}

}  // namespace sim::execution
