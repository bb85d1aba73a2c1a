// sim/engine/simulator.cpp: the run loop, deadlock detection, callback slab and component registry.
#include "sim/engine/simulator.hpp"

#include "sim/base/assert.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

namespace sim::engine {

/// The component that runs schedule_fn callbacks: the event's arg is the callback's slot in the slab.
class Simulator::CallbackRunner final : public Component {
 public:
  explicit CallbackRunner(Simulator& sim) : Component(sim, "engine.callbacks") {}
  void handle(std::uint64_t arg) override { simulator().run_callback(arg); }
};

namespace {

// Clears `flag` when the run returns or throws, so a failed run does not wedge the simulator.
class RunningGuard {
 public:
  explicit RunningGuard(bool& flag) : flag_(flag) { flag_ = true; }
  ~RunningGuard() { flag_ = false; }
  RunningGuard(const RunningGuard&) = delete;
  RunningGuard& operator=(const RunningGuard&) = delete;

 private:
  bool& flag_;
};

}  // namespace

const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::Drained:
      return "drained";
    case StopReason::Deadlock:
      return "deadlock";
    case StopReason::TimeLimit:
      return "time limit";
    case StopReason::Predicate:
      return "predicate";
    case StopReason::EventBudget:
      return "event budget";
  }
  return "unknown";
}

std::string describe(const RunResult& result) {
  std::string out = std::string(to_string(result.reason)) + " at t=" + std::to_string(result.final_time.ns) +
                    " ns after " + std::to_string(result.events) + " events";
  for (const WaitingComponent& w : result.waiting) {
    out += "\n  " + w.name + " (component " + std::to_string(w.id) + ") waits for:";
    for (const std::string& what : w.waiting_for)
      out += "\n    " + what;
  }
  return out;
}

Simulator::Simulator() : callback_runner_(std::make_unique<CallbackRunner>(*this)) {}

Simulator::~Simulator() {
  for (Component* c : components_) {
    if (c != nullptr) c->sim_ = nullptr;  // components that outlive the simulator must not call back into it
  }
}

void Simulator::schedule_fn(base::Time at, std::function<void()> fn, std::int32_t priority) {
  SIM_ASSERT(static_cast<bool>(fn), "empty callback scheduled");
  std::uint32_t slot = 0;
  if (free_callbacks_.empty()) {
    SIM_ASSERT(callbacks_.size() < std::numeric_limits<std::uint32_t>::max(), "too many pending callbacks");
    slot = static_cast<std::uint32_t>(callbacks_.size());
    callbacks_.push_back(std::move(fn));
  } else {
    slot = free_callbacks_.back();
    free_callbacks_.pop_back();
    callbacks_[slot] = std::move(fn);
  }
  schedule_at(at, priority, *callback_runner_, slot);
}

void Simulator::schedule_fn_after(base::Time delay, std::function<void()> fn, std::int32_t priority) {
  SIM_ASSERT(delay >= base::Time::zero(), "negative delay");
  schedule_fn(now_ + delay, std::move(fn), priority);
}

void Simulator::run_callback(std::uint64_t slot) {
  SIM_ASSERT(slot < callbacks_.size() && callbacks_[slot], "callback event without a callback");
  std::function<void()> fn = std::move(callbacks_[slot]);  // fn may schedule more: the slab may grow
  callbacks_[slot] = nullptr;
  free_callbacks_.push_back(static_cast<std::uint32_t>(slot));
  fn();
}

RunResult Simulator::run(const RunLimits& limits) {
  SIM_ASSERT(!running_, "Simulator::run called from inside an event handler");
  const RunningGuard guard(running_);
  const base::Time until = limits.until;  // copies: handlers cannot reach them, so they stay in registers
  const std::uint64_t max_events = limits.max_events;
  const bool has_predicate = static_cast<bool>(limits.stop_when);
  std::uint64_t events = 0;
  for (;;) {
    if (has_predicate && limits.stop_when()) return finish(StopReason::Predicate, events);
    if (queue_.empty()) return finish(StopReason::Drained, events);
    if (queue_.top().at > until) {
      now_ = std::max(now_, until);
      return finish(StopReason::TimeLimit, events);
    }
    if (events == max_events) return finish(StopReason::EventBudget, events);
    const Event e = queue_.pop();
    now_ = e.at;
    ++events;
    ++dispatched_;
    if (observed_) [[unlikely]]
      notify(e);
    // A component's state is out of cache once a replay holds more GPUs than the cache does (issue 20: 131,072
    // GPUs): fetch the one a few events ahead while this one runs. A hint only; a push may still precede it.
    if (const Event* next = queue_.ahead_in_front(kPrefetchAhead)) __builtin_prefetch(components_[next->target]);
    Component* target = components_[e.target];
    SIM_ASSERT(target != nullptr, "event for a destroyed component");
    target->handle(e.arg);
  }
}

RunResult Simulator::finish(StopReason reason, std::uint64_t events) {
  RunResult result{.reason = reason, .events = events, .final_time = now_, .waiting = {}};
  if (reason != StopReason::Drained) return result;
  for (const Component* c : components_) {
    if (c == nullptr) continue;
    std::vector<std::string> work = c->pending_work();
    if (work.empty()) continue;
    result.waiting.push_back(WaitingComponent{.id = c->id(), .name = c->name(), .waiting_for = std::move(work)});
  }
  if (!result.waiting.empty()) result.reason = StopReason::Deadlock;
  return result;
}

void Simulator::notify(const Event& e) {
  const EventKey key = e.key();
  // By index (NOLINT): an observer that misbehaves by detaching itself cannot leave a dangling iterator.
  for (std::size_t i = 0; i < observers_.size(); ++i)  // NOLINT(modernize-loop-convert)
    observers_[i]->on_event(key, e.target, e.arg);
}

void Simulator::add_observer(Observer& observer) {
  SIM_ASSERT(std::find(observers_.begin(), observers_.end(), &observer) == observers_.end(), "observer attached twice");
  observers_.push_back(&observer);
  observed_ = true;
}

void Simulator::remove_observer(Observer& observer) {
  const auto it = std::find(observers_.begin(), observers_.end(), &observer);
  SIM_ASSERT(it != observers_.end(), "removing an observer that is not attached");
  observers_.erase(it);
  observed_ = !observers_.empty();
}

ComponentId Simulator::add_component(Component& c) {
  SIM_ASSERT(components_.size() < std::numeric_limits<ComponentId>::max(), "too many components");
  components_.push_back(&c);
  return static_cast<ComponentId>(components_.size() - 1);
}

void Simulator::remove_component(ComponentId id) {
  SIM_ASSERT(id < components_.size() && components_[id] != nullptr, "component unregistered twice");
  components_[id] = nullptr;
}

}  // namespace sim::engine
