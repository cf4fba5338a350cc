// sigil-sandbox: the action sandbox's zygote, exec'd by each sigil-worker (workers/sandbox/zygote.h).
// The production build has no test natives.
#include "workers/sandbox/zygote.h"

int main(int argc, char** argv) { return sigil::workers::SandboxMain(argc, argv, nullptr); }
