#include "tests/differential/generator_cutlass.hpp"

#include <algorithm>

namespace mbcheck::diff {

std::uint32_t plant_epilogue_load(DiffProgram& p, sim::SplitMix64& rng) {
  constexpr std::uint32_t kLanes = 8;
  p.ctas = 1;
  p.threads = kLanes;
  p.warp_size = 1;
  p.scripts.assign(kLanes, {});
  const std::uint32_t flaw = rng.below(100);
  const auto bytes = static_cast<std::int32_t>(16 * p.copy_pieces);
  const Instr expect{Stmt::expect_tx, 0, bytes}, copy{Stmt::copy, 0, 0}, arrive{Stmt::arrive, 0, 0};
  const Instr wait0{Stmt::wait, 0, 0};
  const bool other_copies = flaw >= 50 && flaw < 62, missing = flaw >= 62 && flaw < 80;
  const bool late = flaw >= 80 && flaw < 90, first = flaw >= 90;
  // Without lane 0's arrival in phase 0, the count is met by the others (mostly) or never.
  p.counts[0] = (missing && rng.below(100) < 70) || late ? kLanes - 1 : kLanes;
  for (std::uint32_t t = 1; t < kLanes; ++t) p.scripts[t] = {arrive};
  auto& elected = p.scripts[0];
  if (first) elected.push_back(arrive);
  elected.push_back(expect);
  if (other_copies)
    p.scripts[1].insert(p.scripts[1].begin(), copy);
  else
    elected.push_back(copy);
  if (late) elected.push_back(wait0);
  if (!first && !missing) elected.push_back(arrive);
  p.scripts[kLanes - 1].push_back(wait0);
  p.scripts[kLanes - 1].push_back({Stmt::load_slot, 0, 0});
  return 2;
}

void plant_bool_try_consumer(DiffProgram& p, sim::SplitMix64& rng) {
  const std::uint32_t stages = rng.below(2) == 0 ? 2 : 1;
  if (p.barriers < stages) {
    p.barriers = stages;
    p.counts.resize(stages, 1);
  }
  const std::uint32_t a = 0, b = 1 % p.total_threads();
  const Stmt consume = rng.below(100) < 65 ? Stmt::try_guard_wait : Stmt::try_then_wait;
  for (std::uint32_t s = 0; s < stages; ++s) {
    const auto bar = static_cast<std::uint8_t>(s);
    p.counts[s] = 1;
    p.scripts[a].push_back({Stmt::arrive_expect_tx, bar, static_cast<std::int32_t>(16 * p.copy_pieces)});
    p.scripts[a].push_back({Stmt::copy, bar, static_cast<std::int32_t>(s)});
    p.scripts[b].push_back({consume, bar, 0});
    p.scripts[b].push_back({Stmt::load_slot, 0, static_cast<std::int32_t>(s)});
  }
}

void add_cutlass_coverage(const DiffProgram& p, std::set<std::string>& seen) {
  // An expect_tx by one of 8+ lanes that arrive on its barrier.
  for (const auto& script : p.scripts)
    for (const Instr& i : script)
      if (i.op == Stmt::expect_tx && p.threads >= 8) {
        const auto arrivers = std::count_if(p.scripts.begin(), p.scripts.end(), [&](const std::vector<Instr>& s) {
          return std::any_of(s.begin(), s.end(),
                             [&](const Instr& j) { return j.op == Stmt::arrive && j.bar == i.bar; });
        });
        if (arrivers >= 7) {
          const bool own = std::any_of(script.begin(), script.end(),
                                       [&](const Instr& j) { return j.op == Stmt::arrive && j.bar == i.bar; });
          seen.insert(own ? "pattern:expect_tx by one of 8 arriving lanes, its own arrive present"
                          : "pattern:expect_tx by one of 8 arriving lanes, its own arrive missing");
        }
      }
  for (const auto& script : p.scripts)
    for (std::size_t k = 0; k < script.size(); ++k) {
      if (script[k].op != Stmt::try_guard_wait && script[k].op != Stmt::try_then_wait) continue;
      seen.insert(script[k].op == Stmt::try_guard_wait ? "pattern:bool try_wait guarding a wait, branches meet"
                                                       : "pattern:bool try_wait guarding a wait, branches differ");
    }
}

}  // namespace mbcheck::diff
