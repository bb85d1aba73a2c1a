// tests/support/tiny_plan_scenario.hpp: the planner tests' tiny scenario (tests/unit/planner_test.cpp,
// tests/unit/plan_command_test.cpp).
#pragma once
#include <string>

namespace sim::planner {

/// A GPT-style model small enough that every strategy on 8 GPUs fits and simulates in microseconds: 4 layers,
/// hidden 256, 4 heads (so tp = 8 breaks heads-tp), learned positions up to 1,024 tokens.
// A GPT-style tiny model on the 2021-22 Megatron-LM stack (unfused attention, dropout 0.1), which the planner tests
// were written for: selective recomputation then costs work.
inline std::string tiny_scenario(const std::string& parallel, int gpus = 8,
                                 const std::string& hardware = "h100-sxm5-80gb") {
  return R"({"schema": "trainsim.scenario/1", "name": "tiny",
    "model": {"name": "tiny", "layers": 4, "hidden": 256, "ffn_hidden": 1024, "heads": 4, "vocab": 1024,
              "activation": "gelu", "max_seq_len": 1024},
    "hardware": ")" +
         hardware + R"(", "cluster": {"gpus": )" + std::to_string(gpus) + R"(},
    "parallel": )" +
         parallel + R"(, "training": {"seq_len": 1024, "tokens": "1B", "fused_attention": false,
                                       "attention_dropout": 0.1, "hidden_dropout": 0.1}})";
}

}  // namespace sim::planner
