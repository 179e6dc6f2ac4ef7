// Puts every test process into a known emulated topology, whatever the caller's environment.
#include <cstdlib>

namespace {
struct TestEnvironment {
	TestEnvironment()
	{
		// Tests choose their side explicitly; default to the host view of the default topology.
		unsetenv("SOFTDPU_TOPOLOGY");
		setenv("SOFTDPU_SIDE", "host", 0);
	}
} const kTestEnvironment;
} // namespace
