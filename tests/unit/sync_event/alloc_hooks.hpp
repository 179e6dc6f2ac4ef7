// This test binary replaces the global operator new/delete (alloc_hooks.cpp) to count the calling
// thread's allocations and to make one fail on demand. Sanitizers own the allocator, so in
// sanitized builds the hooks are not installed and tests that need them skip.
#pragma once

#include <cstddef>

namespace sync_event_test {

// Whether the replacement operators are installed in this build.
bool allocation_hooks_installed();
// operator new calls made by this thread so far.
std::size_t thread_allocations();
// Makes this thread's next operator new call fail (throw std::bad_alloc, or return null for the
// nothrow forms). Cleared once used.
void fail_next_allocation();

} // namespace sync_event_test
