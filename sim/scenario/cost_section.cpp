// sim/scenario/cost_section.cpp: the scenario's `cost` section, parsed strictly, and the price's provenance in words.
// Seam: scenario.cpp reads the file and its other sections; this reads money.
#include "sim/scenario/cost_section.hpp"

#include "sim/base/quantity.hpp"

#include <cmath>
#include <cstdio>

namespace sim::scenario::detail {

using base::JsonReader;
using base::Range;

void parse_cost(JsonReader& c, CostConfig& cost) {
  std::string pricing;
  if (c.optional_enum("pricing", pricing, {"rented", "owned"}))
    cost.pricing = pricing == "owned" ? cost::Pricing::Owned : cost::Pricing::Rented;
  base::Money m;
  cost.rent_given = c.has("gpu_hour") || c.has("price_kind") || c.has("price_date");
  // Upper bounds far above any price, so that no cost overflows to infinity (a user trial: gpu_hour 1e306 USD gave
  // null costs and exit 0, where an out-of-range deadline is refused).
  auto at_most = [](JsonReader& r, std::string_view key, const base::Money& v, double limit, const char* what) {
    if (v.usd <= limit) return true;
    char buf[128];
    std::snprintf(buf, sizeof buf, "%.6g USD is out of range: at most %.6g USD %s", v.usd, limit, what);
    r.error(key, buf);
    return false;
  };
  if (c.optional("gpu_hour", m, base::Sign::Positive) && at_most(c, "gpu_hour", m, 1e6, "per GPU-hour")) {
    cost.gpu_hour = m;
    cost.price_source = "scenario cost.gpu_hour";
  }
  c.optional_enum("price_kind", cost.price_kind, {"on-demand", "reserved", "spot"});
  c.optional("price_date", cost.price_date);
  base::Time t;
  if (c.optional("deadline", t)) cost.deadline = t;
  if (c.optional("budget", m, base::Sign::Positive) && at_most(c, "budget", m, 1e15, "for the run")) cost.budget = m;
  // A price with a unit the strict reader does not know ("0.08 USD/kWh"): read the text, parse it here.
  // Each within bounds far beyond any real one, so that no cost overflows to infinity (a review: 1e306 USD/kWh, or an
  // amortisation of 1e-300 years, gave null costs and exit 0).
  auto unit_price = [](JsonReader& r, std::string_view key, auto parse, double& out, double lo, double hi,
                       const char* range) {
    std::string text;
    if (!r.optional(key, text)) return;
    if (auto p = parse(text)) {
      if (*p.value < lo || *p.value > hi) {
        r.error(key, "\"" + text + "\" is out of range: " + range);
        return;
      }
      out = *p.value;
    } else {
      r.error(key, p.error);
    }
  };
  if (auto o = c.optional_object("owned")) {
    if (o->required("node_price", m, base::Sign::Positive) && at_most(*o, "node_price", m, 1e12, "per node"))
      cost.owned.node_price = m;
    unit_price(*o, "amortisation", cost::parse_years, cost.owned.amortisation_years, 1.0 / 365.25, 1000.0,
               "from 1 day to 1000 years");
    if (o->optional_fraction("utilisation", cost.owned.utilisation) && cost.owned.utilisation <= 0)
      o->error("utilisation", "must be greater than zero");
    o->finish();
    if (cost.pricing != cost::Pricing::Owned) c.error("owned", "is used only with \"pricing\": \"owned\"");
  } else if (cost.pricing == cost::Pricing::Owned) {
    c.error("owned",
            "\"pricing\": \"owned\" needs \"owned\": {\"node_price\": \"...USD\"} (purchase prices are "
            "not published, so there is no default)");
  }
  cost.energy.billed = cost.pricing == cost::Pricing::Owned;  // a rented GPU-hour includes power
  if (auto e = c.optional_object("energy")) {
    e->optional("pue", cost.energy.pue, Range::between(1.0, 3.0));
    unit_price(*e, "price", cost::parse_energy_price, cost.energy.usd_per_kwh, 0.0, 1e6, "at most 1e6 USD/kWh");
    e->optional_fraction("idle_fraction", cost.energy.idle_fraction);
    e->optional("node_power", cost.energy.node_power);
    e->optional("billed", cost.energy.billed);
    e->finish();
  }
  if (auto st = c.optional_object("storage")) {
    unit_price(*st, "price", cost::parse_storage_price, cost.storage.usd_per_gb_month, 0.0, 1e6,
               "at most 1e6 USD/GB-month");
    st->optional("checkpoints_kept", cost.storage.checkpoints_kept, Range::between(0, 1'000'000));
    st->finish();
  }
  // A budget without a price was judged without compute: GB300 (no public price) gave "0.0% of exceeding" a 12M USD
  // budget and "Proceed" (a user trial). The hardware's price, if any, is in cost.gpu_hour already.
  if (cost.budget && cost.pricing == cost::Pricing::Rented && !cost.gpu_hour)
    c.error("budget",
            "needs a price: the hardware profile has no price and cost.gpu_hour is not given; give cost.gpu_hour "
            "(or cost.pricing \"owned\" with cost.owned.node_price)");
  c.finish();
}

void finish_cost(CostConfig& cost, const hardware::HardwareProfile& hw) {
  if (cost.pricing == cost::Pricing::Owned) {
    char years[32];
    std::snprintf(years, sizeof years, "%.3g", cost.owned.amortisation_years);
    cost.price_source = "scenario cost.owned: node price " + base::format_money(cost.owned.node_price) +
                        ", straight-line over " + years + " y at " +
                        std::to_string(static_cast<int>(std::lround(cost.owned.utilisation * 100))) + "% utilisation";
    return;
  }
  if (!cost.gpu_hour) return;
  if (cost.price_source.empty() && hw.price) {  // the profile's price
    if (cost.price_kind.empty()) cost.price_kind = hw.price->kind;
    if (cost.price_date.empty()) cost.price_date = hw.price->date;
    const auto prov = hw.provenance.find("price");
    cost.price_source = hw.name + " profile price" + (prov == hw.provenance.end() ? "" : ": " + prov->second);
  }
  cost.price_source = base::format_money(*cost.gpu_hour) + " per GPU-hour" +
                      (cost.price_kind.empty() ? "" : ", " + cost.price_kind) +
                      (cost.price_date.empty() ? "" : ", " + cost.price_date) + " (" + cost.price_source + ")";
}

}  // namespace sim::scenario::detail
