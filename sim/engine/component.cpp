// sim/engine/component.cpp: registration with the Simulator and the scheduling helpers components use.
#include "sim/engine/component.hpp"

#include "sim/engine/simulator.hpp"
#include "sim/base/assert.hpp"

#include <utility>

namespace sim::engine {

Component::Component(Simulator& sim, std::string name) : sim_(&sim), name_(std::move(name)) {
  id_ = sim_->add_component(*this);
}

Component::~Component() {
  if (sim_ != nullptr) sim_->remove_component(id_);
}

void Component::handle(std::uint64_t /*arg*/) {
  SIM_ASSERT(false, "event delivered to a component that does not handle events");
}

base::Time Component::now() const {
  return sim_->now();
}

void Component::schedule_at(base::Time at, std::int32_t priority, std::uint64_t arg) {
  sim_->schedule_at(at, priority, *this, arg);
}

void Component::schedule_after(base::Time delay, std::int32_t priority, std::uint64_t arg) {
  sim_->schedule_after(delay, priority, *this, arg);
}

void Component::schedule_after(base::Time delay, std::function<void()> fn, std::int32_t priority) {
  sim_->schedule_fn_after(delay, std::move(fn), priority);
}

}  // namespace sim::engine
