// The environment a sandbox zygote is started with, by the supervisor (the shared zygotes) and by a
// worker (its own, when it runs without them): one definition, so both run the same sandbox.
#pragma once

#include <string>
#include <vector>

namespace sigil::common {

// Nothing of the starting process's environment but sanitizer settings (sanitizer builds of the
// tests need them; production has none), and glibc's malloc on transparent huge pages: the preloaded
// heap then maps in 2 MiB pages, so each fork copies fewer page-table entries (the kernel still
// copies a child's writes 4 KiB at a time). Hello world runs/s +6 % (bench_actions, 3 alternating
// rounds against the same build without it). Without THP (`never`) glibc just uses small pages.
// And LD_BIND_NOW=1: every symbol is bound once, in the zygote, not lazily in each child (issue 27:
// a hello-world child's CPU 10.9 -> 9.9 ms, 127 -> 113 page faults).
std::vector<std::string> ZygoteEnvironment();

}  // namespace sigil::common
