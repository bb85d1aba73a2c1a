// sim/engine/component.hpp: a named simulation participant that receives events and can report what it waits for.
#pragma once
#include "sim/engine/event.hpp"
#include "sim/base/units.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sim::engine {

class Simulator;

/// Base of everything the engine delivers events to. A component registers itself with its Simulator on
/// construction (which assigns its id) and unregisters on destruction; no event may still target it then (that is
/// a bug, caught when the event comes due). A component that outlives its Simulator is detached and must not be
/// used except to be destroyed. Components own their state and talk to the world through the engine and
/// callbacks, never through globals.
class Component {
 public:
  Component(Simulator& sim, std::string name);
  virtual ~Component();
  Component(const Component&) = delete;
  Component& operator=(const Component&) = delete;

  const std::string& name() const { return name_; }
  ComponentId id() const { return id_; }
  Simulator& simulator() const { return *sim_; }

  /// The hot-path delivery of an event scheduled for this component with `arg` (what it means is the
  /// component's business: a task index, a generation counter, ...). The default treats delivery as a bug.
  /// The engine has no cancellation: a component that needs it (a timeout superseded by progress, say) bumps a
  /// generation counter, puts it in `arg`, and ignores events whose generation is stale.
  virtual void handle(std::uint64_t arg);

  /// What this component still waits for, one line each (empty when idle). Asked only when the event queue
  /// drains, to tell a finished simulation from a deadlock.
  virtual std::vector<std::string> pending_work() const { return {}; }

 protected:
  base::Time now() const;
  /// Schedules handle(arg) on this component.
  void schedule_at(base::Time at, std::uint64_t arg) { schedule_at(at, kDefaultPriority, arg); }
  void schedule_at(base::Time at, std::int32_t priority, std::uint64_t arg);
  void schedule_after(base::Time delay, std::uint64_t arg) { schedule_after(delay, kDefaultPriority, arg); }
  void schedule_after(base::Time delay, std::int32_t priority, std::uint64_t arg);
  /// Cold-path convenience: runs `fn` after `delay` (the function is stored by the Simulator; prefer handle()
  /// for anything scheduled millions of times).
  void schedule_after(base::Time delay, std::function<void()> fn, std::int32_t priority = kDefaultPriority);

 private:
  friend class Simulator;
  Simulator* sim_;  // never null while the Simulator lives; nulled by its destructor
  std::string name_;
  ComponentId id_ = 0;
};

}  // namespace sim::engine
