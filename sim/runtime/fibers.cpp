// The fiber side of the runtime: one Boost.Fiber fiber per device thread, a scheduling
// algorithm that runs whichever context the runtime decided on, and the fibers' lifetime
// (they outlive executions: parked in between, their stacks scrubbed before each thread).
// What runs and when is decided in runtime.cpp.
#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/all.hpp>
#include <cstring>

#include "sim/runtime/asan_fibers.hpp"
#include "sim/runtime/crash.hpp"
#include "sim/runtime/runtime.hpp"

namespace mbcheck::sim {

constinit thread_local Runtime* runtime_detail::current_runtime = nullptr;

// The boost::fibers scheduling algorithm of one OS thread. It keeps no ready queue: the
// runtime decides which context runs next. A step's switch resumes that context directly
// (Runtime::switch_to); this algorithm is asked only when Boost itself switches: a fiber
// created (its context is bound to its agent here), fibers ended at the runtime's end
// (next_ctx_ says where to go) and Boost's dispatcher freeing them. Boost re-awakens every
// context it switches away from; only the main and dispatcher contexts need remembering.
class StrategyScheduler final : public boost::fibers::algo::algorithm {
 public:
  void awakened(boost::fibers::context* ctx) noexcept override {
    if (ctx->is_context(boost::fibers::type::main_context)) {
      main_ = ctx;
      main_ready_ = true;
    } else if (ctx->is_context(boost::fibers::type::dispatcher_context)) {
      dispatcher_ = ctx;
      dispatcher_ready_ = true;
    } else if (Runtime* rt = Runtime::current_or_null(); rt && rt->newborn_ != kNoAgent) {
      Agent& a = *rt->agent_at_[rt->newborn_];
      if (a.ctx == nullptr) a.ctx = ctx;
    }
  }

  boost::fibers::context* pick_next() noexcept override {
    boost::fibers::context* next = choose_next();
    if (next == main_)
      asan_fibers::announce_thread_stack();
    else if (Runtime* rt = Runtime::current_or_null())
      rt->announce_switch(next);  // a thread's fiber, or Boost's dispatcher (stack unknown)
    else
      asan_fibers::start_switch(nullptr, 0);
    return next;
  }

  bool has_ready_fibers() const noexcept override {
    Runtime* rt = Runtime::current_or_null();
    return (rt && rt->next_ctx_) || main_ready_ || dispatcher_ready_;
  }
  // Nothing here ever waits on time or on other threads.
  void suspend_until(std::chrono::steady_clock::time_point const&) noexcept override {}
  void notify() noexcept override {}

  boost::fibers::context* dispatcher() const { return dispatcher_; }

 private:
  boost::fibers::context* choose_next() noexcept {
    if (Runtime* rt = Runtime::current_or_null(); rt && rt->next_ctx_) {
      boost::fibers::context* next = rt->next_ctx_;
      rt->next_ctx_ = nullptr;
      if (next == main_) main_ready_ = false;
      if (next == dispatcher_) dispatcher_ready_ = false;
      return next;
    }
    if (main_ready_) {
      main_ready_ = false;
      return main_;
    }
    if (dispatcher_ready_) {
      dispatcher_ready_ = false;
      return dispatcher_;
    }
    return nullptr;  // Boost runs its dispatcher
  }
  boost::fibers::context* main_ = nullptr;
  boost::fibers::context* dispatcher_ = nullptr;
  bool main_ready_ = false;
  bool dispatcher_ready_ = false;
};

// Tells AddressSanitizer which stack is about to run (sim/runtime/asan_fibers.hpp).
void Runtime::announce_switch([[maybe_unused]] boost::fibers::context* next) const noexcept {
#if defined(__SANITIZE_ADDRESS__)
  if (next == main_ctx_) return asan_fibers::announce_thread_stack();
  const void* bottom = nullptr;  // Boost's dispatcher: not one of ours, its stack unknown
  std::size_t size = 0;
  for (const auto& f : fibers_)
    if (f.ctx == next) {
      bottom = f.stack_lo;
      size = static_cast<std::size_t>(f.stack_hi - f.stack_lo);
      break;
    }
  asan_fibers::start_switch(bottom, size);
#endif
}

namespace {
thread_local StrategyScheduler* tl_scheduler = nullptr;

void install_scheduler() {
  if (tl_scheduler) return;
  auto* algo = new StrategyScheduler();  // owned (ref-counted) by boost::fibers' per-thread scheduler
  tl_scheduler = algo;
  boost::fibers::context::active()->get_scheduler()->set_algo(boost::fibers::algo::algorithm::ptr_t(algo));
}
}  // namespace

// Executions create and drop hundreds of fibers each: their stacks (each with a guard region
// below it, sim/runtime/crash.hpp) are pooled. The pool is shared with the allocators Boost keeps,
// so that a stack given back late still has somewhere to go.
struct Runtime::StackPool {
  std::shared_ptr<GuardedStackPool> pool;
  unsigned char* last = nullptr;  // the stack handed out last: the newborn fiber's
};

// Stack colouring. A stack's live top (Boost's fiber record, fiber_loop's and the protocol's
// frames: 2-3 KiB) sits at the same offset of every mapping, and mappings are page-aligned, so
// the tops of all threads' stacks fell into the same sets of the L1 data cache (4 KiB apart
// per way) and evicted each other and the agents at every switch: callgrind's cache model of
// this VM counted a third of a fuzzing run's L1 data misses there. Thread i's stack starts
// (i mod 8) * 512 bytes below the top of a mapping one page larger than --stack-size, so the
// tops spread over the whole 4 KiB and every stack keeps at least its requested size.
constexpr std::size_t kStackColors = 8, kStackColorStride = 512;
constexpr std::size_t kStackColorBytes = 4096;
static_assert((kStackColors - 1) * kStackColorStride < kStackColorBytes);

class PooledGuardedStack {
 public:
  PooledGuardedStack(std::shared_ptr<GuardedStackPool> pool, unsigned char** last, std::uint32_t slot)
      : pool_(std::move(pool)), last_(last), color_(slot % kStackColors * kStackColorStride) {}
  boost::context::stack_context allocate() {
    unsigned char* lo = pool_->take();
    asan_fibers::unpoison(lo, pool_->bytes());
    *last_ = lo;
    boost::context::stack_context sctx;
    sctx.size = pool_->bytes() - color_;
    sctx.sp = lo + pool_->bytes() - color_;
    return sctx;
  }
  void deallocate(boost::context::stack_context& sctx) noexcept {
    pool_->give(static_cast<unsigned char*>(sctx.sp) - sctx.size);
  }

 private:
  std::shared_ptr<GuardedStackPool> pool_;
  unsigned char** last_;
  std::size_t color_;  // how far below the top of its mapping the stack starts
};

Runtime::Runtime() : stacks_(std::make_unique<StackPool>()) {}
Runtime::~Runtime() {
  if (watched_) unwatch(*this);
  quit_fibers();
}

namespace {
const void* this_os_thread() {
  static thread_local const char marker = 0;
  return &marker;
}
}  // namespace

// Ends the parked fibers: each returns from fiber_loop and Boost frees it (and gives its stack
// back). Only on the OS thread they belong to; a runtime destroyed elsewhere leaks them.
void Runtime::quit_fibers() {
  if (fibers_.empty() || fiber_thread_ != this_os_thread() || !tl_scheduler) {
    fibers_.clear();
    return;
  }
  MakeCurrent current(this);
  main_ctx_ = boost::fibers::context::active();
  quitting_ = true;
  for (const ParkedFiber& f : fibers_) switch_to(f.ctx);  // each ends, and Boost comes back here
  fibers_.clear();
  quitting_ = false;
  if (boost::fibers::context* dispatcher = tl_scheduler->dispatcher()) {  // frees them now
    next_ctx_ = dispatcher;  // through Boost's scheduler: the dispatcher then picks this context again
    boost::this_fiber::yield();
    asan_fibers::finish_switch();
  }
}

// The body of thread fiber `slot`: thread `slot` of each execution, parked in between.
void Runtime::fiber_loop(std::uint32_t slot) {
  for (;;) {
    asan_fibers::finish_switch();  // started, or resumed from its park
    if (quitting_) {
      next_ctx_ = main_ctx_;  // ending: Boost then runs what the scheduler picks, the main context
      return;
    }
#if defined(__x86_64__)
    // Spin recognition compares live stacks, so what a snapshot can see (snapshot_limit_ bytes
    // below fiber_main's frame, which starts right below this one) must be this execution's
    // only (a pooled or parked stack holds older frames): zero it from here, above all of it,
    // by one string store (no call, no stack). Not before the runtime's first capture: a
    // capture deeper than this scrub makes the execution run again (snapshot_too_deep).
    std::uintptr_t sp;
    asm volatile("movq %%rsp, %0" : "=r"(sp));
    const auto lo = reinterpret_cast<std::uintptr_t>(fibers_[slot].stack_lo);
    constexpr std::uintptr_t kFramesAbove = 512;  // fiber_main's own frame, and more
    std::uintptr_t from = std::max(lo, sp - std::min<std::uintptr_t>(sp - lo, snapshot_limit_ + kFramesAbove));
    from &= ~std::uintptr_t{7};
    if (snapshot_limit_ > 0 && from < sp) {
      asan_fibers::unpoison(reinterpret_cast<const void*>(from), sp - from);
      std::uintptr_t words = (sp - from) / 8;
      asm volatile("rep stosq" : "+D"(from), "+c"(words) : "a"(std::uint64_t{0}) : "memory");
    }
#endif
    fiber_main(slot);
    // Parked: next_ctx_ says who runs now; resumed for the next execution's thread `slot`.
    boost::fibers::context* next = next_ctx_;
    next_ctx_ = nullptr;
    switch_to(next);
  }
}

void append_thread_state(std::vector<unsigned char>& out, const std::uint64_t* regs, std::size_t reg_bytes,
                         const unsigned char* sp, const unsigned char* top) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(regs);
  const auto live = static_cast<std::size_t>(top - sp);
#if defined(__SANITIZE_ADDRESS__)
  out.resize(reg_bytes + live);
  std::memcpy(out.data(), bytes, reg_bytes);
  asan_fibers::copy_stack(out.data() + reg_bytes, sp, live);  // redzones and all
#else
  // Appended, not resized and then overwritten: no zeroing pass (a capture is made at every
  // atomic load).
  out.reserve(reg_bytes + live);
  out.insert(out.end(), bytes, bytes + reg_bytes);
  out.insert(out.end(), sp, top);
#endif
}

Runtime::MakeCurrent::MakeCurrent(Runtime* rt) : outer(runtime_detail::current_runtime) {
  runtime_detail::current_runtime = rt;
}
Runtime::MakeCurrent::~MakeCurrent() { runtime_detail::current_runtime = outer; }

void Runtime::prepare_fibers(std::size_t stack_bytes) {
  install_scheduler();
  if (!stacks_->pool || stacks_->pool->bytes() != stack_bytes + kStackColorBytes) {
    quit_fibers();  // their stacks are of the old size
    stacks_->pool = std::make_shared<GuardedStackPool>(stack_bytes + kStackColorBytes);
  }
}

// A step's switch: straight to the context the runtime decided on, not through Boost's
// scheduler (its yield re-queues the running context and asks the algorithm: a third of
// the switch). The running context needs no queue: the runtime resumes it when it decides to.
void Runtime::switch_to(boost::fibers::context* ctx) {
  announce_switch(ctx);
  ctx->resume();
  asan_fibers::finish_switch();
}

Agent& Runtime::new_agent() {
  const auto id = static_cast<AgentId>(agent_at_.size());
  if (agent_pool_.size() <= id) agent_pool_.push_back(&agent_storage_.emplace_back());
  Agent& a = *agent_pool_[id];
  a.start(id);  // keeps the buffers the last execution grew (the spin snapshots above all)
  agent_at_.push_back(&a);
  return a;
}

// One fiber per device thread, on a guarded stack from the pool.
void Runtime::spawn_threads() {
  for (std::uint32_t cta = 0; cta < shape_.ctas; ++cta) {
    for (std::uint32_t t = 0; t < shape_.threads_per_cta; ++t) {
      Agent& a = new_agent();
      a.cta = cta;
      a.thread = t;
      a.snapshot.reserve(snapshot_bytes());  // a thread's captures do not allocate (copies take none)
      if (a.id < fibers_.size()) {           // a parked fiber: it scrubs its stack when resumed
        a.ctx = fibers_[a.id].ctx;
      } else {
        newborn_ = a.id;
        boost::fibers::fiber f(std::allocator_arg, PooledGuardedStack(stacks_->pool, &stacks_->last, a.id),
                               [this, slot = a.id] { fiber_loop(slot); });
        f.detach();
        newborn_ = kNoAgent;
        fibers_.push_back({a.ctx, stacks_->last, stacks_->last + stacks_->pool->bytes()});
      }
      a.stack_lo = fibers_[a.id].stack_lo;
      a.stack_hi = fibers_[a.id].stack_hi;
    }
  }
  fiber_thread_ = this_os_thread();
}

// Where a thread primed up to its first operation (or finished, or ended the execution)
// hands on to: the next thread to prime, else the main context.
boost::fibers::context* Runtime::primed_next(AgentId id) {
  if (!over_ && id + 1 < threads_) {
    current_ = &*agent_at_[id + 1];
    return current_->ctx;
  }
  current_ = nullptr;
  return main_ctx_;
}

void Runtime::run_threads() {
  // Priming: run every thread, in order, up to its first visible operation. Code before it
  // touches nothing shared that the schedule could order differently. Each thread hands on
  // to the next (primed_next), the last one back here: one switch per thread, not two.
  priming_ = true;
  if (threads_ > 0) {
    current_ = &*agent_at_[0];
    switch_to(agent_at_[0]->ctx);
  }
  priming_ = false;
  if (!over_) {
    boost::fibers::context* next = decide();
    if (next != main_ctx_) switch_to(next);
  }
  // The execution is over: unwind every thread still inside protocol code.
  for (std::uint32_t i = 0; i < threads_; ++i) {
    if (agent_at_[i]->state == Agent::State::finished) continue;
    current_ = &*agent_at_[i];
    switch_to(agent_at_[i]->ctx);
  }
  current_ = nullptr;
  to_runtime();
}

}  // namespace mbcheck::sim
