// softdpu topology check FILE | softdpu topology default
#include "commands.hpp"

#include "device/topology.hpp"

#include <cstdio>
#include <string>

namespace softdpu::cli {

namespace {

int usage()
{
	std::fprintf(stderr, "usage: softdpu topology check FILE   validate a topology file (docs/topology.md)\n"
			     "       softdpu topology default      print the built-in topology as JSON\n");
	return 2;
}

} // namespace

int topology_command(Arguments args)
{
	if (args.size() == 1 && args[0] == "default") {
		std::string_view text = device::Topology::builtin_default_text();
		std::fwrite(text.data(), 1, text.size(), stdout);
		return 0;
	}
	if (args.size() != 2 || args[0] != "check")
		return usage();
	const std::string path(args[1]);
	// The side only selects which functions are local; validation is the same for both.
	device::Topology::ParseResult result = device::Topology::load_file(path, device::Side::dpu);
	if (!result.topology) {
		std::fprintf(stderr, "softdpu: invalid topology: %s\n", result.error.c_str());
		return 1;
	}
	size_t host = 0, dpu = 0;
	for (const auto &function : result.topology->all_functions())
		++(function->side == device::Side::host ? host : dpu);
	std::printf("%s: valid topology: %zu host function(s), %zu DPU function(s), %zu representor(s)\n", path.c_str(),
		    host, dpu, result.topology->representors().size());
	return 0;
}

} // namespace softdpu::cli
