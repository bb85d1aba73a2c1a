// sim/cost/cost.hpp: money and risk of a simulated run: rented or owned compute, energy, checkpoint storage, cost per
// failure, a waterfall of the mean cost, and deadline/budget/tail risk.
#pragma once
#include "sim/base/quantity.hpp"
#include "sim/base/units.hpp"
#include "sim/results/json.hpp"
#include "sim/results/run_result.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sim::cost {

// ---- documented defaults (each with its source; README "Cost model") -------------------------------------------

/// Power usage effectiveness (facility power / IT power). 1.3: Uptime Institute Global Data Center Survey 2024, "new,
/// larger facilities achieve PUEs of 1.3 or better" (industry average 1.58 in 2023, Uptime Intelligence Update 221;
/// Google's fleet about 1.1; shared/validation/reliability_public.json power.pue_industry_avg, power.pue_hyperscale).
inline constexpr double kDefaultPue = 1.3;
/// Electricity price: 8.06 US cents/kWh, the US average retail price to industrial customers in 2023 (U.S. Energy
/// Information Administration, Electric Power Annual / Electric Power Monthly Table 5.3, as charted by Statista
/// 2024-03-18, https://www.eia.gov/electricity/annual/).
inline constexpr double kDefaultUsdPerKwh = 0.0806;
/// A node draws this fraction of its full-load power while the job waits (failure detection, restart, repair).
/// An assumption, not a published figure: no source gives the idle draw of a whole 8-GPU server; it is the order of
/// an idle GPU (~10% of TDP) plus the host, fans and NICs that keep running.
inline constexpr double kDefaultIdleFraction = 0.3;
/// Checkpoint storage: 0.023 USD per GB-month, Amazon S3 Standard, first 50 TB per month, US East (N. Virginia),
/// https://aws.amazon.com/s3/pricing/ .
inline constexpr double kDefaultStorageUsdPerGbMonth = 0.023;
/// Checkpoints kept at any time: the newest and the one before it (a silent-corruption rollback may need the older
/// one). An assumption; Llama-scale runs keep many more, so set cost.storage.checkpoints_kept.
inline constexpr int kDefaultCheckpointsKept = 2;
/// Straight-line amortisation over 5 years: Amazon's useful life for servers from 2025 (Amazon.com 2024 Form 10-K,
/// useful life of a subset of servers and networking equipment reduced from six to five years).
inline constexpr double kDefaultAmortisationYears = 5.0;
inline constexpr double kHoursPerYear = 365.25 * 24;  // Julian year
inline constexpr double kDaysPerMonth = 365.25 / 12;  // 30.44 d, the billing month of storage prices

enum class Pricing { Rented, Owned };
const char* to_string(Pricing p);

/// Owned hardware: the purchase price is spread evenly over the hours it is used (straight-line depreciation):
///   burn per node-hour = node_price / (amortisation_years x 8766 h x utilisation).
/// Utilisation is the fraction of the lifetime that is billed to jobs; 1.0 charges the run only its own hours.
struct OwnedPrice {
  base::Money node_price;
  double amortisation_years = kDefaultAmortisationYears;
  double utilisation = 1.0;
};

/// Energy: nodes x node power x PUE x (busy hours + idle_fraction x idle hours) x price per kWh. Busy: computing,
/// checkpointing, redoing lost work, running degraded; idle: detection, restart, waiting for repair. Node power is
/// the whole server at full load (its GPUs' TDP included), an upper bound for training draw. Billed separately only
/// when `billed` (owned clusters, metered colocation); a rented GPU-hour already includes power.
struct EnergyInputs {
  base::Power node_power;
  double pue = kDefaultPue;
  double usd_per_kwh = kDefaultUsdPerKwh;
  double idle_fraction = kDefaultIdleFraction;
  bool billed = false;
};

/// Checkpoint storage: checkpoints_kept x checkpoint bytes, kept for the whole wall time, at a price per GB-month.
struct StorageInputs {
  base::Bytes checkpoint;  // one checkpoint (0: storage not costed)
  int checkpoints_kept = kDefaultCheckpointsKept;
  double usd_per_gb_month = kDefaultStorageUsdPerGbMonth;
};

struct CostInputs {
  int gpus = 0;
  base::Money gpu_hour;                // rented price per GPU-hour
  std::optional<base::Time> deadline;  // wall-clock time to train
  std::optional<base::Money> budget;
  int nodes = 0;  // for owned pricing and energy
  Pricing pricing = Pricing::Rented;
  OwnedPrice owned;
  EnergyInputs energy;
  StorageInputs storage;
  std::string price_source;  // where the compute price comes from, for the report
};

struct CostSummary {
  double mean_usd = 0, p10_usd = 0, p50_usd = 0, p90_usd = 0;
  double burn_usd_per_hour = 0;                                 // the whole cluster, idle or not (compute price only)
  double failures_usd_mean = 0;                                 // lost GPU-hours of every cause, at the price
  double per_failure_mean_usd = 0;                              // over every interruption
  std::vector<std::pair<std::string, double>> per_failure_usd;  // mean cost of one interruption, by cause
  std::optional<double> p_deadline_miss;
  std::optional<double> p_budget_overrun;
  /// The deadline and budget those two judge (the scenario's cost.deadline and cost.budget); none where it sets none.
  std::optional<double> deadline_days;
  std::optional<double> budget_usd;

  double cvar95_usd = 0;  // mean cost of the worst 5% of trials
  double energy_usd_mean = 0;
  double storage_usd_mean = 0;
  std::string pricing;       // "rented" | "owned"
  std::string price_source;  // where the compute price comes from
  /// Label -> mean USD, in display order: compute, checkpoints, "failure: <cause>" (largest first), "unattributed
  /// downtime" (only when the causes do not cover every stopped hour), energy, storage. Sums to mean_usd.
  std::vector<std::pair<std::string, double>> waterfall_usd;
  double energy_mwh_mean = 0;   // facility energy (PUE included), billed or not
  double usd_per_wall_day = 0;  // all-in: compute + energy + storage per day of wall time
};

/// Cost of a run. The cluster is paid for its whole wall time, detection, restarts and repair waits included:
///   compute = burn x wall time, burn = gpus x price per GPU-hour (rented) or nodes x owned burn per node-hour;
///   energy and storage as EnergyInputs and StorageInputs say; mean = the three summed over the mean wall time.
/// Percentiles and CVaR95 scale the time-to-train distribution by the all-in cost per wall day (exact for compute
/// and storage, which are linear in wall time; energy uses the mean busy/idle split). CVaR95 averages the worst
/// ceil(5% n) trials' times from the histogram (bin midpoints: within the histogram's resolution, 0.03% for the
/// Monte Carlo's time bins). A cause's cost per failure = its lost GPU-hours (detection, restart, lost work,
/// repair waits and degraded time it caused) x burn per GPU-hour / its interruptions: a mean only, since the Monte
/// Carlo keeps per-cause means, not per-cause distributions. Deadline and budget risks read the time-to-train
/// distribution (a budget is a wall-time limit at the all-in rate). A window-mode run costs its mean window.
CostSummary run_cost(const results::RunSummary& run, const CostInputs& in);
/// The earlier name of run_cost (rented pricing is the CostInputs default).
inline CostSummary rented_cost(const results::RunSummary& run, const CostInputs& in) {
  return run_cost(run, in);
}

/// Burn rate of the cluster's compute price in USD per hour (rented or owned), without energy and storage.
double burn_usd_per_hour(const CostInputs& in);
/// The same inputs with the compute price (rented GPU-hour or owned node price) multiplied by `factor`.
CostInputs with_price_scaled(CostInputs in, double factor);

/// Mean of the values above the q-quantile (the worst ceil((1-q) n) of n values) from a histogram, at bin
/// midpoints: +infinity when one of them overflowed, NaN when empty. Ranks are sampled (2,000 at most) beyond that.
double tail_mean(const results::Histogram& h, double q);

/// "0.08 USD/kWh" or "80 USD/MWh" -> USD per kWh; a unit is required.
base::Parsed<double> parse_energy_price(std::string_view text);
/// "0.023 USD/GB-month" or "23 USD/TB-month" -> USD per GB-month; a unit is required.
base::Parsed<double> parse_storage_price(std::string_view text);
/// "5 y" (also yr, year, years) or any time ("1826 d") -> years.
base::Parsed<double> parse_years(std::string_view text);

/// Fills the contract's cost fields of a `trainsim.run/1` object (cost_usd, cost_per_failure_usd, p_deadline_miss,
/// p_budget_overrun).
void add_cost_json(results::Json& run_json, const CostSummary& c);

}  // namespace sim::cost
