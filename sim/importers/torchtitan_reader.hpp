// sim/importers/torchtitan_reader.hpp: what the parts of the TorchTitan importer share (internal to sim/importers):
// the file's origin, the import being built, the keys not read yet and the errors, with typed reads that mark a key
// read; and the reading of the precision (mixed precision, FP8 and MX converters), torchtitan_reader.cpp.
#pragma once
#include "sim/importers/importers.hpp"
#include "sim/importers/toml.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sim::importers::titan {

class Reader {
 public:
  explicit Reader(const std::string& origin) : origin_(origin) {}

 protected:
  /// The key is read: it leaves the list of keys reported as not modelled.
  void used(const std::string& section, const std::string& key);
  void error(int line, const std::string& message);
  /// [section] key as a positive integer (or -1 where allowed); absent: nullopt.
  std::optional<std::int64_t> integer(const std::string& section, const TomlValue& t, const char* key,
                                      bool allow_minus_one = false);
  /// [section] key as a string; absent: nullopt.
  std::optional<std::string> text(const std::string& section, const TomlValue* t, const char* key);
  /// training.dtype and training.fp8_recipe: [training] mixed_precision_param, and the FP8 or MX converters of every
  /// TorchTitan release with their recipe.
  void precision(const TomlValue& root, const TomlValue* tr);
  /// [parallelism] pipeline_parallel_schedule as parallel.schedule (torchtitan_pipeline.cpp).
  void schedule(const TomlValue* par, std::int64_t pp);
  /// TorchTitan's split of the layers over the (virtual) stages as parallel.layers_per_stage, and Interleaved1F1B's
  /// stages per rank as parallel.vpp, once the model's layers are known (torchtitan_pipeline.cpp).
  void pipeline_split(std::int64_t pp, const TomlValue* par);
  /// [activation_checkpoint] selective_ac_option N (layer_sac_) as recomputation once the model and the split are known
  /// (torchtitan_pipeline.cpp).
  void layer_selective_checkpointing(Draft& d);
  /// The keys left unread, once everything is read: refused where the name says it may set the layout or the batch
  /// and the value is not TorchTitan's default (TorchTitan itself refuses keys it does not know: a typo such as
  /// tensor_paralel_degree must not pass as "not modelled"), warned where it says precision, memory or speed, listed
  /// as ignored otherwise.
  void report_unread(const TomlValue& root);

  const std::string& origin_;
  Import out_;
  std::vector<std::string> ignored_;  // "section.key" not read (yet)
  std::vector<base::Diagnostic> errors_;
  std::optional<std::int64_t> model_layers_;  // the model's layers, where the file or the options give the model
  std::optional<std::string> interleaved_;    // where an Interleaved1F1B schedule is chosen
  std::optional<std::pair<int, std::string>> layer_sac_;  // selective_ac_option N, and where it was set

 private:
  const TomlValue* quantize_table(const TomlValue& root, const char* group, const char* kind);
  void fp8_recipe(const TomlValue* table, const std::string& section, bool mx);
};

}  // namespace sim::importers::titan
