// sim/execution/replay_gpu.cpp: one GPU of a replayed step: its compute stream running the pipeline program's
// segments, its collectives' arrivals at their groups, its data-parallel stream and the optimizer (replay.hpp).
#include "sim/execution/replay.hpp"

#include <algorithm>
#include <string>

namespace sim::execution::replay {

// ---- Gpu --------------------------------------------------------------------------------------------------------

std::size_t Gpu::ready_index(int mb, int chunk) const {
  return static_cast<std::size_t>(mb) * static_cast<std::size_t>(replay_.plan().vpp()) +
         static_cast<std::size_t>(chunk);
}

const OpWork& Gpu::work(const PipeOp& op) const {
  const StageWork& st = replay_.plan().stage(op.chunk, rank_);
  // A steady-state pair of Megatron-Core's combined 1F1B (parallel.ep_comm_overlap): all-to-alls beside the partner.
  const bool paired = op.paired && !st.forward_paired.segments.empty();
  switch (op.kind) {
    case OpKind::Forward:
      return paired ? st.forward_paired : st.forward;
    case OpKind::Backward:
      return paired ? st.backward_paired : st.backward;
    case OpKind::BackwardInput:
      return st.backward_input;
    case OpKind::BackwardWeight:
      return st.backward_weight;
  }
  return st.forward;
}

void Gpu::enter(State s, Category cat) {
  acc_[static_cast<std::size_t>(cat_)] += now() - since_;
  since_ = now();
  state_ = s;
  cat_ = cat;
}

void Gpu::start() {
  const auto slots = static_cast<std::size_t>(replay_.plan().micro_batches() * replay_.plan().vpp());
  fwd_ready_.assign(slots, 0);
  bwd_ready_.assign(slots, 0);
  since_ = now();
  begin_op();
}

void Gpu::begin_op() {
  const auto& prog = replay_.program(rank_);
  if (op_ == prog.size()) {
    maybe_finish();
    return;
  }
  const PipeOp& op = prog[op_];
  const int vs = replay_.plan().layout.stage(op.chunk, rank_);
  bool ready = true;
  if (op.kind == OpKind::Forward && vs > 0) ready = fwd_ready_[ready_index(op.micro_batch, op.chunk)] != 0;
  if ((op.kind == OpKind::Backward || op.kind == OpKind::BackwardInput) && vs < replay_.last_stage())
    ready = bwd_ready_[ready_index(op.micro_batch, op.chunk)] != 0;
  if (!ready) {
    if (state_ != State::WaitingInput) enter(State::WaitingInput, kPpWait);
    return;
  }
  op_start_ = now();
  seg_ = 0;
  work_ = &work(op);
  // Gradient buckets become ready during the last micro-batch's gradient pass of each chunk (ZeRO >= 2: during every
  // micro-batch's).
  buckets_ = reduces_buckets(op) && !whole_bucket_op(op) && !replay_.plan().dp_after_backward
                 ? &replay_.plan().stage(op.chunk, rank_).buckets
                 : nullptr;
  bucket_cursor_ = 0;
  run_segment();
}

void Gpu::run_segment() {
  const OpWork& w = *work_;
  if (seg_ == w.segments.size()) {
    end_op();
    return;
  }
  const TimedSegment& s = w.segments[seg_];
  switch (s.kind) {
    case SegKind::Compute: {
      enter(State::Computing, kCompute);
      const double stretched = static_cast<double>(s.duration.ns) * slowdown_;
      schedule_after(Time{static_cast<std::int64_t>(stretched + 0.5)}, kSegmentDone);
      return;
    }
    case SegKind::Tp:
      enter(State::Collective, kTp);
      if (tp_ != nullptr) {
        tp_->arrive(s.duration);
      } else {
        schedule_after(s.duration, kSelfTimedDone);  // lockstep: the peers arrive together
      }
      return;
    case SegKind::Cp:
      enter(State::Collective, kCp);
      if (cp_ != nullptr) {
        cp_->arrive(s.duration);
      } else {
        schedule_after(s.duration, kSelfTimedDone);
      }
      return;
    case SegKind::Dp:
      enter(State::Collective, kDp);
      schedule_after(s.duration, kSelfTimedDone);  // the exposed part of a prefetched ZeRO-3 gather: timed
      return;
    case SegKind::Ep:
      enter(State::Collective, kEp);
      if (replay_.full() && ep_ != nullptr) {
        ep_->arrive(s.duration);
      } else {
        schedule_after(s.duration, kSelfTimedDone);  // replica: the other replicas are symmetric
      }
      return;
  }
}

void Gpu::segment_done() {
  const TimedSegment& s = work_->segments[seg_];
  if (record_ && s.kind != SegKind::Compute)
    record(
        s.kind == SegKind::Tp   ? 1
        : s.kind == SegKind::Cp ? 4
        : s.kind == SegKind::Dp ? 3
                                : 5,
        [&]() -> const std::string& { return replay_.plan().labels[s.label]; }, since_, now());
  if (buckets_ != nullptr) {
    const auto seg = static_cast<int>(seg_);
    for (; bucket_cursor_ < buckets_->size() && (*buckets_)[bucket_cursor_].ready_after <= seg; ++bucket_cursor_)
      if ((*buckets_)[bucket_cursor_].ready_after == seg) enqueue_bucket();
  }
  ++seg_;
  run_segment();
}

void Gpu::end_op() {
  const PipeOp& op = replay_.program(rank_)[op_];
  const auto& plan = replay_.plan();
  const auto& layout = plan.layout;
  const int vs = layout.stage(op.chunk, rank_);
  record(
      0,
      [&] {
        return std::string(parallel::to_string(op.kind)) + std::to_string(op.micro_batch) +
               (plan.vpp() > 1 ? ".c" + std::to_string(op.chunk) : "");
      },
      op_start_, now());
  // The stage after (forward) or before (backward) runs on the next or the previous rank (the last rank wraps to rank
  // 0 under interleaving), or under DualPipeV's fold on this rank itself, where nothing is sent.
  auto send = [&](int to, std::uint64_t kind, const char* what) {
    // Without the V, forwards go to the next rank and backwards to the previous one; in it, chunk 1 runs the other
    // way, and the fold (the last rank's stages pp - 1 and pp) stays on its rank.
    const bool forward = kind == kForwardInput;
    const bool reversed = layout.v_shape && op.chunk == 1;
    const bool fold = layout.v_shape && rank_ == layout.pp - 1 && op.chunk == (forward ? 0 : 1);
    Gpu& gpu = fold ? *this : forward != reversed ? *next_ : *prev_;
    const Time arrive = &gpu == this ? now() : now() + plan.p2p;
    const std::uint64_t arg =
        kind | static_cast<std::uint64_t>(op.micro_batch) << 8 | static_cast<std::uint64_t>(layout.chunk_of(to)) << 40;
    simulator().schedule_at(arrive, engine::kDefaultPriority, gpu, arg);
    if (&gpu != this)
      record(
          2, [&] { return what + std::to_string(op.micro_batch); }, now(), arrive);
  };
  if (plan.dp_after_backward) {
    // finalize_model_grads: every bucket of the rank's gradient passes, once the last of them has ended.
    const auto& prog = replay_.program(rank_);
    const auto reducing = [&](std::size_t i) { return reduces_buckets(prog[i]); };
    bool last_pass = reducing(op_);
    for (std::size_t i = op_ + 1; last_pass && i < prog.size(); ++i)
      last_pass = !reducing(i);
    for (std::size_t i = 0; last_pass && i <= op_; ++i)
      if (reducing(i))
        for (std::size_t b = 0; b < plan.stage(prog[i].chunk, rank_).buckets.size(); ++b)
          enqueue_bucket();
  } else if (whole_bucket_op(op) && reduces_buckets(op)) {
    for (std::size_t b = 0; b < plan.stage(op.chunk, rank_).buckets.size(); ++b)
      enqueue_bucket();
  }
  if (op.kind == OpKind::Forward && vs < replay_.last_stage()) send(vs + 1, kForwardInput, "send F");
  if ((op.kind == OpKind::Backward || op.kind == OpKind::BackwardInput) && vs > 0)
    send(vs - 1, kBackwardInput, "send B");
  ++op_;
  enter(State::Ready, kIdle);
  begin_op();
}

void Gpu::handle(std::uint64_t arg) {
  const std::uint64_t kind = arg & 0xff;
  if (kind == kSegmentDone || kind == kSelfTimedDone) {
    if (state_ == State::Optimizer) {
      enter(State::Ready, kIdle);
      ++chunks_optimized_;
      maybe_finish();
      return;
    }
    segment_done();
    return;
  }
  if (kind == kDpSelfDone) {
    dp_done();
    return;
  }
  const int mb = static_cast<int>((arg >> 8) & 0xffffffffULL);
  const int chunk = static_cast<int>(arg >> 40);
  auto& flags = kind == kForwardInput ? fwd_ready_ : bwd_ready_;
  flags[ready_index(mb, chunk)] = 1;
  if (state_ == State::WaitingInput) begin_op();
}

bool Gpu::reduces_buckets(const PipeOp& op) const {
  const auto& plan = replay_.plan();
  // Weight gradients come out of full backwards and W ops (ZB-H1 has only the latter, 1F1B and interleaving only the
  // former, DualPipeV both); input-gradient halves carry none.
  const bool grad_op = op.kind == OpKind::Backward || op.kind == OpKind::BackwardWeight;
  return grad_op && (plan.dp_every_micro_batch || op.micro_batch == plan.micro_batches() - 1);
}

bool Gpu::whole_bucket_op(const PipeOp& op) const {
  return op.kind == OpKind::BackwardWeight && replay_.plan().schedule == parallel::Schedule::DualPipeV;
}

void Gpu::enqueue_bucket() {
  ++dp_ready_;
  if (!dp_busy_) dp_start_next();
}

void Gpu::dp_start_next() {
  if (dp_ready_ == 0) return;
  // The oldest ready bucket: the cursor's, or the first bucket of the next op that reduces its buckets.
  const auto& plan = replay_.plan();
  const auto& prog = replay_.program(rank_);
  for (; dp_op_ < prog.size(); ++dp_op_, dp_bucket_ = 0) {
    const PipeOp& op = prog[dp_op_];
    if (reduces_buckets(op) && dp_bucket_ < plan.stage(op.chunk, rank_).buckets.size()) break;
  }
  if (dp_op_ == prog.size()) return;  // unreachable: a ready bucket lies at or past the cursor
  const DpBucket& b = plan.stage(prog[dp_op_].chunk, rank_).buckets[dp_bucket_++];
  --dp_ready_;
  const DpWork w{b.duration, plan.dp_reduce_scatter ? collectives::Op::ReduceScatter : collectives::Op::AllReduce,
                 b.bytes, b.expert_bytes, b.expert_duration};
  dp_busy_ = true;
  dp_started_ = now();
  if (replay_.full() && dp_ != nullptr) {
    dp_->arrive(w);
  } else {
    schedule_after(w.duration, kDpSelfDone);
  }
}

void Gpu::dp_done() {
  dp_busy_ = false;
  record(
      3, [&] { return state_ == State::ParamGather ? "param all-gather" : "grad reduce"; }, dp_started_, now());
  if (state_ == State::ParamGather) {
    enter(State::Done, kIdle);
    end_ = now();
    return;
  }
  if (dp_ready_ > 0) {
    dp_start_next();
    return;
  }
  if (state_ == State::WaitingDp) maybe_finish();
}

void Gpu::maybe_finish() {
  if (dp_busy_ || dp_ready_ > 0) {
    if (state_ != State::WaitingDp) enter(State::WaitingDp, kDp);
    return;
  }
  const auto& plan = replay_.plan();
  // Optimizer over this rank's chunks (one step each), then the parameter all-gather of ZeRO >= 1.
  if (chunks_optimized_ < plan.vpp()) {
    const Time t = plan.stage(chunks_optimized_, rank_).optimizer;
    enter(State::Optimizer, kOptimizer);
    const double stretched = static_cast<double>(t.ns) * slowdown_;
    schedule_after(Time{static_cast<std::int64_t>(stretched + 0.5)}, kSegmentDone);
    return;
  }
  Time gather;
  for (int c = 0; c < plan.vpp(); ++c)
    gather += plan.stage(c, rank_).param_gather;
  if (gather > Time::zero()) {
    enter(State::ParamGather, kDp);
    dp_busy_ = true;
    dp_started_ = now();
    if (replay_.full() && dp_ != nullptr) {
      dp_->arrive(gather);
    } else {
      schedule_after(gather, kDpSelfDone);
    }
    return;
  }
  enter(State::Done, kIdle);
  end_ = now();
}

std::vector<std::string> Gpu::pending_work() const {
  if (state_ == State::Done) return {};
  const auto& prog = replay_.program(rank_);
  if (op_ < prog.size()) {
    const PipeOp& op = prog[op_];
    return {std::string("op ") + parallel::to_string(op.kind) + " micro-batch " + std::to_string(op.micro_batch) +
            " chunk " + std::to_string(op.chunk) + (state_ == State::WaitingInput ? " waits for its input" : "")};
  }
  return {"waits for data-parallel gradient reduction"};
}

}  // namespace sim::execution::replay
