// sim/importers/draft.hpp: what an importer found, as dotted scenario paths with their origins, rendered to JSON.
#pragma once
#include "sim/base/errors.hpp"
#include "sim/results/json.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sim::importers {

/// One value of a scenario or model field, as it will be written to JSON (lists: layer patterns, module names).
using Value =
    std::variant<std::int64_t, double, bool, std::string, std::vector<std::int64_t>, std::vector<std::string>>;
std::string to_string(const Value& v);  // 8, 0.5, true, "bf16" (strings quoted, as in JSON)

/// A scenario field found in an input: its dotted scenario path ("parallel.tp", "model.layers"), value and origin
/// ("launch.sh:7 --tensor-model-parallel-size", "config.json /num_hidden_layers", "--gpus").
struct Field {
  std::string path;
  Value value;
  std::string origin;
  bool weak = false;  // a framework default implied by an absent flag: an explicit value elsewhere wins
};

/// Something in an input that the scenario does not get: not modelled by trainsim (ignored) or needed but not
/// determinable from the input (unresolved). `where` names the file and line or JSON path.
struct Finding {
  std::string where;
  std::string what;
  std::string path = {};  // the scenario field it concerns: an unresolved finding is settled once that field is given
  std::string to_string() const { return where.empty() ? what : where + ": " + what; }
};

/// A partial scenario (or model) assembled from one or more inputs. Two inputs that give one field different values
/// are a conflict, reported with both origins; `override_value` (from --set) replaces without a conflict.
class Draft {
 public:
  /// Records `path` = `value`. A different explicit value already recorded is a conflict: a diagnostic in
  /// `conflicts()`. A weak value (a framework default) loses to an explicit one, with a note saying so.
  void put(std::string path, Value value, std::string origin, bool weak = false);
  /// Records `path` = `value`, replacing whatever was there (explicit user choice: --set, --gpus).
  void override_value(std::string path, Value value, std::string origin);
  /// Removes a field and everything below it ("model" removes "model.layers").
  void erase(std::string_view path);
  /// Removes only the field at `path` (a model reference, not the inline model fields below it).
  void erase_field(std::string_view path);
  const Field* find(std::string_view path) const;
  bool has(std::string_view path) const { return find(path) != nullptr; }
  /// An integer field, if present and an integer.
  std::optional<std::int64_t> integer(std::string_view path) const;
  const std::vector<Field>& fields() const { return fields_; }
  const std::vector<base::Diagnostic>& conflicts() const { return conflicts_; }
  /// Framework defaults that lost to an explicit value from another input.
  const std::vector<Finding>& notes() const { return notes_; }

  /// Copies every field of `other` (its conflicts too); fields of `other` that disagree with ours are conflicts.
  void merge(const Draft& other);

 private:
  std::vector<Field> fields_;
  std::vector<base::Diagnostic> conflicts_;
  std::vector<Finding> notes_;
};

/// The outcome of one importer: the draft, plus what it ignored, could not resolve, or took from the framework's
/// documented defaults (notes, e.g. "ffn_hidden = 4*hidden: Megatron-LM's default without --ffn-hidden-size").
struct Import {
  Draft draft;
  std::vector<Finding> ignored;
  std::vector<Finding> unresolved;
  std::vector<Finding> notes;
  /// What the input sets that changes the step, memory or run but trainsim does not model, or cannot tell (flags it
  /// does not know): printed as warnings, apart from the ignored ones, which change none of them.
  std::vector<Finding> not_modelled;

  void merge(const Import& other);
};

/// The unresolved findings that no input or option settled (their field is still missing).
std::vector<Finding> unsettled(const Import& im);

/// The fields a scenario cannot do without, each with a hint on how to give it; empty when complete.
/// (A model is complete when it is a reference ("model": "llama3-8b") or has every required architecture field.)
std::vector<Finding> missing_scenario_fields(const Draft& d);
/// The same for a model (fields under "model.").
std::vector<Finding> missing_model_fields(const Draft& d);

/// The scenario JSON (schema trainsim.scenario/1) in the order of the scenario contract; fields not in the contract
/// order (from --set) follow in the order they were given.
results::Json scenario_json(const Draft& d);
/// The model JSON (schema trainsim.model/1) from the fields under "model.".
results::Json model_json(const Draft& d);

/// The whole text of an input file; a missing, unreadable or empty file is a ConfigError naming it.
std::string read_input_file(const std::string& path);

/// Parses an integer as the frameworks write them ("8", "-1", "1_024" in TOML is handled by the TOML reader).
std::optional<std::int64_t> parse_integer(std::string_view text);
/// Parses a --set value: an integer, a number, true/false, or else a string.
Value parse_value(std::string_view text);

}  // namespace sim::importers
