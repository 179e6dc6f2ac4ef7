// softdpu: command line for the software DPU. main() only dispatches to a subcommand.
#include "commands.hpp"

#include <cstdio>
#include <string_view>
#include <vector>

namespace {

struct Subcommand {
	std::string_view name;
	int (*run)(softdpu::cli::Arguments);
	std::string_view summary;
};

constexpr Subcommand kSubcommands[] = {
    {"devices", softdpu::cli::devices_command, "list the emulated local devices and representors [--json]"},
    {"topology", softdpu::cli::topology_command, "check FILE | default: validate or print topology files"},
    {"memif", softdpu::cli::memif_command, "gen | sink | responder: memif packet generator, sink, ARP/ping responder"},
#ifdef SOFTDPU_HAVE_APSH
    {"apsh", softdpu::cli::apsh_command, "ps | threads | libs | vads | modules | netscan | ...: App Shield on a guest"},
#endif
};

void print_usage(std::FILE *out)
{
	std::fprintf(out, "usage: softdpu <command> [args...]\n\ncommands:\n");
	for (const Subcommand &command : kSubcommands)
		std::fprintf(out, "  %-10.*s %.*s\n", static_cast<int>(command.name.size()), command.name.data(),
			     static_cast<int>(command.summary.size()), command.summary.data());
	std::fprintf(out, "\nenvironment: SOFTDPU_SIDE=host|dpu (default dpu), SOFTDPU_TOPOLOGY=FILE.json\n");
}

} // namespace

int main(int argc, char **argv)
{
	std::vector<std::string_view> args(argv + 1, argv + argc);
	if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		print_usage(args.empty() ? stderr : stdout);
		return args.empty() ? 2 : 0;
	}
	for (const Subcommand &command : kSubcommands)
		if (command.name == args[0])
			return command.run(softdpu::cli::Arguments(args).subspan(1));
	std::fprintf(stderr, "softdpu: unknown command '%.*s'\n\n", static_cast<int>(args[0].size()), args[0].data());
	print_usage(stderr);
	return 2;
}
