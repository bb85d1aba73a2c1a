// sim/parallel/pipeline_layout.hpp: Megatron-LM's --pipeline-model-parallel-layout strings read into stages.
//
// Megatron-Core's PipelineParallelLayerLayout (megatron/core/transformer/pipeline_parallel_layer_layout.py at
// 00caa53a): a string of virtual pipeline stages separated by '|', in model order (stage k runs on pipeline rank
// k % pp as chunk k / pp, so pp x vpp stages; under trainsim's dualpipev the V places them, Layout::stage), each a run
// of layer characters: 'E' the embedding, 't' a transformer layer, 'm' a multi-token-prediction layer, 'L' the loss
// (output layer). Commas are cosmetic; "(...)*n" repeats a group (not nested) and "x*n" one character. Megatron checks
// that 'E' comes first and 'L' last, each exactly once, that the 't' count is the model's layers and the 'm' count its
// MTP layers, after every 't'. A stage may be empty. Example: DeepSeek-V3 on PP 8 x VPP 4, "Et|(tt|)*30L": embedding
// and one layer, 30 stages of two, the loss alone.
#pragma once
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sim::parallel {

struct PipelineLayout {
  std::vector<int> layers;  // transformer layers ('t') per virtual stage, in model order
  int mtp = 0;              // MTP layers ('m'); trainsim runs them with the loss, on the last stage
};

/// The stages of a layout string, or what is wrong with it (the character and its position, and what Megatron-LM
/// accepts). Model-independent checks only; the counts against a model are feasibility rules. Refuses what trainsim
/// does not model: MTP layers on a stage other than the loss's.
std::variant<PipelineLayout, std::string> parse_pipeline_layout(std::string_view text);

/// A layout string for the given transformer layers per virtual stage (model order) and MTP layers: the embedding
/// first, the MTP layers and the loss last, "t*n" for a stage of more than three layers, "(stage|)*n" for three or
/// more alike stages in a row; parse_pipeline_layout reads it back to the same stages.
std::string pipeline_layout_text(const std::vector<int>& layers, int mtp);

}  // namespace sim::parallel
