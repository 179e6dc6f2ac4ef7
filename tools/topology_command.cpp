// softdpu topology check FILE | softdpu topology default
#include "commands.hpp"

#include <softdpu/topology.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

namespace softdpu::cli {

namespace {

int check(const std::string &path)
{
	softdpu_topology_counts counts{};
	char error[1024] = {};
	const doca_error_t status = softdpu_topology_check_file(path.c_str(), &counts, error, sizeof(error));
	if (status != DOCA_SUCCESS) {
		std::fprintf(stderr, "softdpu topology: invalid topology: %s\n", error);
		return 1;
	}
	std::printf("%s: valid topology: %u host function(s), %u DPU function(s), %u representor(s)\n", path.c_str(),
		    counts.host_functions, counts.dpu_functions, counts.representors);
	return 0;
}

} // namespace

void add_topology_command(CLI::App &app)
{
	CLI::App *topology = app.add_subcommand("topology", "check FILE | default: validate or print topology files");
	topology->require_subcommand(1);
	topology->footer("Topology files: docs/topology.md.");

	auto path = std::make_shared<std::string>();
	CLI::App *check_command = topology->add_subcommand("check", "validate a topology file");
	check_command->add_option("file", *path, "the topology file (JSON)")->required();
	check_command->callback([path] {
		if (int status = check(*path); status != 0)
			throw CommandFailed{status};
	});

	CLI::App *default_command = topology->add_subcommand("default", "print the built-in topology as JSON");
	default_command->callback([] {
		const char *text = softdpu_topology_get_default_text();
		std::fwrite(text, 1, std::strlen(text), stdout);
	});
}

} // namespace softdpu::cli
