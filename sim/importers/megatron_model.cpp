// sim/importers/megatron_model.cpp: Megatron-LM's architecture flags of the classic GPT layer (activation, norm,
// positions, biases, tied embeddings, MLP width, query groups, MoE top-k and width, the padded vocabulary, the position
// table) with Megatron-LM's defaults when the file describes a model. Seam: megatron.cpp reads the script and the
// parallel layout; megatron_features.cpp the features beyond this layer. Defaults follow
// megatron/training/arguments.py.
#include "sim/importers/megatron_args.hpp"

namespace sim::importers::megatron {
void apply_model_flags(const Context& c) {
  Draft& d = c.out.draft;
  // --encoder-num-layers and --encoder-seq-length are num_layers and seq_length when those are absent (validate_args).
  if (const Given* g = c.given("encoder-num-layers"); g && !c.given("num-layers"))
    if (auto n = python_int(g->value)) d.put("model.layers", *n, where(c, *g) + " (Megatron-LM's num_layers)");
  if (const Given* g = c.given("encoder-seq-length"); g && !c.given("seq-length"))
    if (auto n = python_int(g->value)) d.put("training.seq_len", *n, where(c, *g) + " (Megatron-LM's seq_length)");
  const bool describes_model = c.given("num-layers") || c.given("encoder-num-layers") || c.given("hidden-size") ||
                               c.given("num-attention-heads");
  const std::string dflt = c.origin + " (Megatron-LM default)";
  if (const Given* g = c.given("swiglu")) {
    d.put("model.activation", std::string("swiglu"), where(c, *g));
  } else if (const Given* r = c.given("squared-relu")) {
    d.put("model.activation", std::string("relu2"), where(c, *r));
  } else if (describes_model) {
    d.put("model.activation", std::string("gelu"), c.origin + " (Megatron-LM default without --swiglu)", true);
  }
  if (const Given* g = c.given("normalization")) {
    d.put("model.norm", std::string(g->value == "RMSNorm" || g->value == "rmsnorm" ? "rmsnorm" : "layernorm"),
          where(c, *g));
  } else if (describes_model) {
    d.put("model.norm", std::string("layernorm"), dflt, true);
  }
  // The legacy --use-rotary-position-embeddings sets position_embedding_type "rope" whatever else is given
  // (megatron/training/arguments.py, "Legacy RoPE arguments"; Megatron-DeepSpeed's own spelling of rotary positions).
  if (const Given* rotary = c.given("use-rotary-position-embeddings")) {
    d.put("model.position_embedding", std::string("rope"), where(c, *rotary));
  } else if (const Given* g = c.given("position-embedding-type")) {
    // Megatron-LM's other choices (none, relative, mrope; Megatron-DeepSpeed's alibi) are refused by their Choice spec.
    d.put("model.position_embedding", std::string(g->value == "rope" ? "rope" : "learned"), where(c, *g));
  } else if (describes_model) {
    d.put("model.position_embedding", std::string("learned"), dflt, true);
  }
  if (const Given* g = c.given("disable-bias-linear")) {
    d.put("model.bias", false, where(c, *g));
  } else if (describes_model) {
    d.put("model.bias", true, dflt + ", linear layers with biases", true);
  }
  if (const Given* g = c.given("add-qkv-bias")) d.put("model.qkv_bias", true, where(c, *g));
  if (const Given* g = c.given("untie-embeddings-and-output-weights")) {
    d.put("model.tied_embeddings", false, where(c, *g));
  } else if (describes_model) {
    d.put("model.tied_embeddings", true, dflt + ", tied input and output embeddings", true);
  }
  // MLP width default: 4h, or for SwiGLU int(4h * 2/3 / 64) * 64 (arguments.py).
  if (const auto h = d.integer("model.hidden"); h && !d.has("model.ffn_hidden")) {
    const bool swiglu = c.given("swiglu") != nullptr;
    const std::int64_t ffn = swiglu ? (4 * *h * 2 / 3) / 64 * 64 : 4 * *h;
    d.put("model.ffn_hidden", ffn,
          c.origin + (swiglu ? " (Megatron-LM default: int(4 x hidden x 2/3 / 64) x 64)"
                             : " (Megatron-LM default: 4 x hidden)"),
          true);
  }
  // Key/value heads: --num-query-groups counts only with --group-query-attention (default 1 group then).
  const Given* gqa = c.given("group-query-attention");
  const Given* groups = c.given("num-query-groups");
  if (gqa) {
    if (groups) {
      if (auto n = python_int(groups->value)) d.put("model.kv_heads", *n, where(c, *groups));
    } else {
      d.put("model.kv_heads", std::int64_t{1}, where(c, *gqa) + " (Megatron-LM default: 1 query group)", true);
    }
  } else if (groups) {
    c.out.notes.push_back({where(c, *groups), "ignored without --group-query-attention, as Megatron-LM does"});
  }
  // Megatron-DeepSpeed's --num-key-value-heads: the grouped-query attention's key/value heads.
  if (const Given* kv = c.given("num-key-value-heads"); kv && !gqa)
    if (auto n = python_int(kv->value)) d.put("model.kv_heads", *n, where(c, *kv));
  if (const auto heads = d.integer("model.heads"); heads && !d.has("model.kv_heads"))
    d.put("model.kv_heads", *heads, dflt + ", multi-head attention", true);
  apply_megatron_deepspeed_moe(c);
  // MoE: top-k defaults to 2, the expert width to the MLP width.
  if (d.has("model.moe.experts")) {
    if (!d.has("model.moe.top_k")) d.put("model.moe.top_k", std::int64_t{2}, dflt + " --moe-router-topk 2", true);
    if (!d.has("model.moe.ffn_hidden")) {
      if (auto f = c.lookup("model.ffn_hidden"))
        d.put("model.moe.ffn_hidden", *f, dflt + " (expert width = MLP width)", true);
    }
  }
  apply_architecture_features(c);
  // Vocabulary: Megatron-LM pads --vocab-size to a multiple of --make-vocab-size-divisible-by (128) x tp
  // (_vocab_size_with_padding in megatron/training/tokenizer); --padded-vocab-size is taken as given. --vocab-size
  // sizes only the NullTokenizer and TikTokenizer; every other --tokenizer-type brings its own vocabulary
  // (build_tokenizer: the Hugging Face tokenizer's len(), the SentencePiece or BPE model's), which the script does not
  // state.
  const Given* tokenizer = c.given("tokenizer-type");
  const bool vocab_from_tokenizer =
      tokenizer && tokenizer->value != "NullTokenizer" && tokenizer->value != "TikTokenizer";
  if (vocab_from_tokenizer && !c.given("padded-vocab-size") && !c.lookup("model.vocab")) {
    c.out.unresolved.push_back({where(c, *tokenizer),
                                tokenizer->value +
                                    " sizes the vocabulary from its tokenizer files, which the script does not "
                                    "state (Megatron-LM reads --vocab-size only for NullTokenizer and TikTokenizer); "
                                    "give --model-config config.json or --set model.vocab=N",
                                "model.vocab"});
    if (const Given* g = c.given("vocab-size"))
      c.out.notes.push_back({where(c, *g), "not the vocabulary: " + tokenizer->value + " brings its own"});
  }
  if (const Given* g = c.given("vocab-size"); g && !c.given("padded-vocab-size") && !vocab_from_tokenizer) {
    auto v = python_int(g->value);
    // NullTokenizer adds its end-of-document token after the --vocab-size ids (megatron/training/tokenizer/
    // tokenizer.py, _NullTokenizer: vocab_size = vocab_size + 1), and the padding pads that (a tester's trial).
    const bool eod = tokenizer && tokenizer->value == "NullTokenizer" && v && *v > 0;
    if (eod) *v += 1;
    const Given* div = c.given("make-vocab-size-divisible-by");
    const std::int64_t multiple =
        (div ? parse_integer(div->value).value_or(128) : 128) * c.lookup("parallel.tp").value_or(1);
    if (v && *v > 0) {
      const std::int64_t padded = (*v + multiple - 1) / multiple * multiple;
      d.put("model.vocab", padded,
            where(c, *g) + (eod ? " + 1 (NullTokenizer's end-of-document token)" : "") +
                (padded == *v ? std::string()
                              : " padded to a multiple of " + std::to_string(multiple) + " as Megatron-LM does"),
            padded != *v || eod);
    } else {
      c.error(g->line, g->flag + ": \"" + g->value + "\" is not a positive integer");
    }
  }
  // The position table: Megatron-LM sizes it to --max-position-embeddings, else the sequence length.
  if (describes_model && !d.has("model.max_seq_len"))
    if (auto seq = d.integer("training.seq_len")) d.put("model.max_seq_len", *seq, dflt + " (= --seq-length)", true);
}

}  // namespace sim::importers::megatron
