// sim/base/log.hpp: a logger handed down from the CLI; writes to stderr-like streams, never to stdout.
#pragma once
#include <ostream>
#include <string_view>

namespace sim::base {

enum class LogLevel { Quiet = 0, Warn = 1, Info = 2, Debug = 3 };

/// Passed by reference to whoever needs to log; no global logger exists.
class Log {
 public:
  Log(std::ostream& out, LogLevel level) : out_(&out), level_(level) {}
  LogLevel level() const { return level_; }
  void warn(std::string_view msg) const { write(LogLevel::Warn, "warning: ", msg); }
  void info(std::string_view msg) const { write(LogLevel::Info, "", msg); }
  void debug(std::string_view msg) const { write(LogLevel::Debug, "debug: ", msg); }

 private:
  void write(LogLevel at, std::string_view prefix, std::string_view msg) const {
    if (static_cast<int>(level_) < static_cast<int>(at)) return;
    *out_ << prefix << msg << '\n';
  }
  std::ostream* out_;
  LogLevel level_;
};

}  // namespace sim::base
