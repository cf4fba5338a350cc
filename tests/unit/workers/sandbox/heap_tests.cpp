// The sandbox's counting allocator and timeout hook, used outside a run (as the zygote does).
#include <cppunit/extensions/HelperMacros.h>

#include <duktape.h>

#include "workers/sandbox/child.h"

using namespace sigil::workers;

class SandboxHeapTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(SandboxHeapTests);
    CPPUNIT_TEST(testHeapHooksWorkOutsideARun);
    CPPUNIT_TEST_SUITE_END();

public:
    void testHeapHooksWorkOutsideARun() {
        // Before any RUN (as in the zygote) the hooks impose no cap and no deadline.
        const SandboxHeapHooks h = SandboxHeap();
        duk_context* ctx = duk_create_heap(h.alloc, h.realloc, h.free, h.udata, nullptr);
        CPPUNIT_ASSERT(ctx != nullptr);
        CPPUNIT_ASSERT_EQUAL(0, duk_peval_string(ctx, "var s = 0; for (var i = 0; i < 300000; i++) s += i; s"));
        CPPUNIT_ASSERT_EQUAL(44999850000.0, duk_get_number(ctx, -1));
        duk_destroy_heap(ctx);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(SandboxHeapTests);
