// sim/parallel/pipeline_layout.cpp: Megatron-LM's layout strings unrolled and checked (pipeline_layout.hpp).
#include "sim/parallel/pipeline_layout.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>

namespace sim::parallel {
namespace {

/// A layout unrolls to at most this many characters (Llama 3 405B at PP 16 x VPP 8 is under 300): a bound, so that a
/// hostile "(t)*999999999" is refused instead of filling memory.
constexpr std::size_t kMaxUnrolled = 1'000'000;

const char* kSyntax =
    "Megatron-LM's layout syntax: stages separated by '|', each of 'E' (embedding), 't' (transformer layer), "
    "'m' (MTP layer), 'L' (loss); \"(...)*n\" or \"x*n\" repeats; e.g. \"Et|(tt|)*30L\"";

std::string at(std::size_t i) {
  return " at position " + std::to_string(i + 1);
}

/// Reads "*n" at text[i]; advances i past it. Empty when there is none or n is not a count in 1..kMaxUnrolled.
std::string repeat_count(std::string_view text, std::size_t& i, std::size_t& n) {
  if (i >= text.size() || text[i] != '*') return "no '*'";
  std::size_t j = i + 1;
  n = 0;
  while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])) != 0) {
    n = n * 10 + static_cast<std::size_t>(text[j] - '0');
    if (n > kMaxUnrolled) return "the repeat count" + at(i) + " is above " + std::to_string(kMaxUnrolled);
    ++j;
  }
  if (j == i + 1) return "'*'" + at(i) + " is not followed by a count";
  i = j;
  return {};
}

bool append(std::string& out, std::string_view piece, std::size_t times) {
  if (piece.size() * times > kMaxUnrolled - out.size()) return false;
  for (std::size_t k = 0; k < times; ++k)
    out.append(piece);
  return true;
}

}  // namespace

std::variant<PipelineLayout, std::string> parse_pipeline_layout(std::string_view text) {
  const std::string too_long = "unrolls to more than " + std::to_string(kMaxUnrolled) + " layer characters";
  // Unroll "(group)*n", then "x*n", as Megatron's two regular expressions do in that order; commas are cosmetic.
  std::string cleaned = {};
  for (char c : text)
    if (c != ',') cleaned += c;
  std::string grouped;
  for (std::size_t i = 0; i < cleaned.size();) {
    if (cleaned[i] != '(') {
      if (grouped.size() == kMaxUnrolled) return too_long;
      grouped += cleaned[i++];
      continue;
    }
    const std::size_t close = cleaned.find(')', i + 1);
    const std::size_t nested = cleaned.find('(', i + 1);
    if (close == std::string::npos) return "'('" + at(i) + " is never closed; " + kSyntax;
    if (nested < close) return "nested parentheses" + at(nested) + " are not part of " + kSyntax;
    if (close == i + 1) return "an empty group" + at(i) + "; " + kSyntax;
    std::size_t j = close + 1, n = 0;
    if (const std::string e = repeat_count(cleaned, j, n); !e.empty())
      return "the group" + at(i) + " is not followed by \"*n\" (" + e + "); " + kSyntax;
    if (!append(grouped, std::string_view(cleaned).substr(i + 1, close - i - 1), n)) return too_long;
    i = j;
  }
  std::string flat;
  for (std::size_t i = 0; i < grouped.size();) {
    const char c = grouped[i];
    if (c != 'E' && c != 't' && c != 'm' && c != 'L' && c != '|')
      return std::string("'") + (std::isprint(static_cast<unsigned char>(c)) != 0 ? std::string(1, c) : "?") + "'" +
             at(i) + " of the unrolled layout is not a layer character; " + kSyntax;
    std::size_t j = i + 1, n = 1;
    if (j < grouped.size() && grouped[j] == '*')
      if (const std::string e = repeat_count(grouped, j, n); !e.empty()) return e + "; " + kSyntax;
    if (!append(flat, std::string_view(&grouped[i], 1), n)) return too_long;
    i = j;
  }

  PipelineLayout out;
  out.layers.push_back(0);
  int embeddings = 0, losses = 0, mtp_stage = -1;
  bool after_mtp = false;
  for (std::size_t i = 0; i < flat.size(); ++i) {
    const char c = flat[i];
    const int stage = static_cast<int>(out.layers.size()) - 1;
    if (c == '|') {
      out.layers.push_back(0);
    } else if (c == 't') {
      if (after_mtp) return "a transformer layer 't' after an MTP layer 'm' (Megatron-LM places every 't' first)";
      ++out.layers.back();
    } else if (c == 'm') {
      if (mtp_stage >= 0 && mtp_stage != stage)
        return "MTP layers 'm' on more than one stage (Megatron-LM keeps them in one)";
      mtp_stage = stage;
      after_mtp = true;
      ++out.mtp;
    } else if (c == 'E') {
      ++embeddings;
      if (i != 0) return "the embedding 'E' must be the layout's first layer";
    } else {
      ++losses;
      if (i + 1 != flat.size()) return "the loss 'L' must be the layout's last layer";
    }
  }
  if (embeddings != 1 || losses != 1)
    return "the layout needs the embedding 'E' and the loss 'L' exactly once each (it has " +
           std::to_string(embeddings) + " and " + std::to_string(losses) + ")";
  if (mtp_stage >= 0 && mtp_stage != static_cast<int>(out.layers.size()) - 1)
    return "MTP layers 'm' on a stage of their own (stage " + std::to_string(mtp_stage) +
           ") are not modelled: trainsim runs them with the loss; put them in the last stage, e.g. \"...|tmL\"";
  return out;
}

std::string pipeline_layout_text(const std::vector<int>& layers, int mtp) {
  if (layers.empty()) return "E" + std::string(static_cast<std::size_t>(std::max(mtp, 0)), 'm') + "L";
  std::vector<std::string> stages;
  stages.reserve(layers.size());
  for (const int n : layers)
    stages.push_back(n > 3 ? "t*" + std::to_string(n) : std::string(static_cast<std::size_t>(std::max(n, 0)), 't'));
  stages.front().insert(0, "E");
  stages.back() += std::string(static_cast<std::size_t>(std::max(mtp, 0)), 'm') + "L";
  // Runs of three or more alike stages before the last one as Megatron-LM's "(stage|)*n" (DeepSeek-V3's
  // "Et|(tt|)*30mL"), so that 128 one-layer stages read "E|(t|)*126L".
  std::string text;
  for (std::size_t v = 0; v + 1 < stages.size();) {
    std::size_t run = 1;
    while (v + run + 1 < stages.size() && stages[v + run] == stages[v])
      ++run;
    if (run >= 3) {
      text += "(" + stages[v] + "|)*" + std::to_string(run);
    } else {
      for (std::size_t k = 0; k < run; ++k)
        text += stages[v] + "|";
    }
    v += run;
  }
  return text + stages.back();
}

}  // namespace sim::parallel
