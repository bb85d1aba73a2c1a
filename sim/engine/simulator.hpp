// sim/engine/simulator.hpp: the clock, the event queue and the run loop with its stop conditions.
#pragma once
#include "sim/engine/component.hpp"
#include "sim/engine/event.hpp"
#include "sim/engine/event_queue.hpp"
#include "sim/engine/observer.hpp"
#include "sim/base/assert.hpp"
#include "sim/base/units.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace sim::engine {

/// Why a run returned.
enum class StopReason {
  Drained,      // no events left and no component waits for anything: the simulation finished
  Deadlock,     // no events left but some component still waits: RunResult::waiting says who and for what
  TimeLimit,    // the next event lies after RunLimits::until; the clock was advanced to `until`
  Predicate,    // RunLimits::stop_when returned true
  EventBudget,  // RunLimits::max_events events were dispatched and more are pending
};
const char* to_string(StopReason reason);

/// Stop conditions of one run; any combination. Written with designated initializers: run({.until = 5_ms}).
struct RunLimits {
  base::Time until = base::Time::max();  // dispatch events with at <= until, then stop at until
  std::uint64_t max_events = std::numeric_limits<std::uint64_t>::max();  // per run
  std::function<bool()> stop_when = {};  // checked before the first event and after each one
};

/// A component that still waited when the queue drained.
struct WaitingComponent {
  ComponentId id = 0;
  std::string name;
  std::vector<std::string> waiting_for;  // the component's pending_work()
};

/// The outcome of a run, as a value: a deadlock is a result, never an exception or a hang.
struct RunResult {
  StopReason reason = StopReason::Drained;
  std::uint64_t events = 0;               // dispatched by this run
  base::Time final_time;                  // the clock when the run returned
  std::vector<WaitingComponent> waiting;  // non-empty exactly when reason == Deadlock

  bool deadlocked() const { return reason == StopReason::Deadlock; }
};

/// One paragraph for logs and error messages, naming each waiting component and what it waited for.
std::string describe(const RunResult& result);

/// The discrete-event engine: a clock, a queue of events ordered by (time, priority, insertion sequence), the
/// registered components they target, and observers. Knows nothing of GPUs. Not thread-safe: one Simulator per
/// thread (each Monte Carlo trial owns its own), and the same inputs give the same event trace on any machine.
class Simulator {
 public:
  Simulator();
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  base::Time now() const { return now_; }

  /// Delivers handle(arg) to `target` at `at`; lower priority first among events at the same time, then the
  /// order of scheduling. Scheduling in the past is a bug (SIM_ASSERT). Allocates nothing in steady state.
  void schedule_at(base::Time at, std::int32_t priority, Component& target, std::uint64_t arg) {
    SIM_ASSERT(at >= now_, "event scheduled in the past");
    SIM_ASSERT(target.sim_ == this, "event scheduled for a component of another simulator");
    queue_.push(at, priority, target.id_, arg);
  }
  void schedule_after(base::Time delay, std::int32_t priority, Component& target, std::uint64_t arg) {
    SIM_ASSERT(delay >= base::Time::zero(), "negative delay");
    schedule_at(now_ + delay, priority, target, arg);
  }

  /// Cold-path convenience: runs `fn` at `at`. Functions live in a reusable slab; the event carries the slot.
  void schedule_fn(base::Time at, std::function<void()> fn, std::int32_t priority = kDefaultPriority);
  void schedule_fn_after(base::Time delay, std::function<void()> fn, std::int32_t priority = kDefaultPriority);

  /// Dispatches events in order until a limit is reached or the queue drains. Not re-entrant.
  RunResult run(const RunLimits& limits = {});
  RunResult run_until(base::Time until) { return run(RunLimits{.until = until}); }

  std::size_t pending_events() const { return queue_.size(); }
  std::uint64_t events_dispatched() const { return dispatched_; }  // over all runs

  /// Observers are not owned; remove one before destroying it, and never from inside on_event.
  void add_observer(Observer& observer);
  void remove_observer(Observer& observer);

  /// Registered components by id (null for an id whose component was destroyed). Id 0 is the engine's own
  /// "engine.callbacks", which runs schedule_fn callbacks; ids are never reused.
  std::size_t component_count() const { return components_.size(); }
  const Component* component(ComponentId id) const { return id < components_.size() ? components_[id] : nullptr; }

 private:
  friend class Component;
  class CallbackRunner;

  ComponentId add_component(Component& c);
  void remove_component(ComponentId id);
  void run_callback(std::uint64_t slot);
  void notify(const Event& e);
  RunResult finish(StopReason reason, std::uint64_t events);

  base::Time now_;
  EventQueue queue_;
  std::uint64_t dispatched_ = 0;
  bool running_ = false;
  bool observed_ = false;                           // !observers_.empty(), kept in one flag for the run loop
  static constexpr std::size_t kPrefetchAhead = 4;  // events between a component's prefetch and its event
  std::vector<Component*> components_;              // by id; not owned
  std::vector<Observer*> observers_;                // not owned
  std::vector<std::function<void()>> callbacks_;    // slab for schedule_fn, indexed by event arg
  std::vector<std::uint32_t> free_callbacks_;
  std::unique_ptr<CallbackRunner> callback_runner_;  // declared last: registers into components_
};

}  // namespace sim::engine
