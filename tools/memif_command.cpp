// softdpu memif gen|sink|responder: the memif example applications of samples/memif on the
// command line. Each application parses its own options; argv[0] becomes "softdpu memif <name>".
#include "commands.hpp"

#include <cstdio>
#include <string>
#include <vector>

#if SOFTDPU_HAVE_MEMIF
#include "memif_app.h"
#endif

namespace softdpu::cli {

namespace {

#if SOFTDPU_HAVE_MEMIF
struct MemifApplication {
	std::string_view name;
	int (*main)(int, char **);
	std::string_view summary;
};

constexpr MemifApplication kApplications[] = {
    {"gen", memif_app_gen_main, "send numbered, patterned frames (rate, size, count; --echo checks them back)"},
    {"sink", memif_app_sink_main, "receive frames; check count, order and content; report rate and loss"},
    {"responder", memif_app_responder_main, "answer ARP requests and ping for an IPv4 address"},
};

void print_memif_usage(std::FILE *out)
{
	std::fprintf(out, "usage: softdpu memif <application> [options]   (softdpu memif <application> --help)\n\n"
			  "applications:\n");
	for (const MemifApplication &application : kApplications)
		std::fprintf(out, "  %-10.*s %.*s\n", static_cast<int>(application.name.size()),
			     application.name.data(), static_cast<int>(application.summary.size()),
			     application.summary.data());
}
#endif

} // namespace

int memif_command(Arguments args)
{
#if SOFTDPU_HAVE_MEMIF
	if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		print_memif_usage(args.empty() ? stderr : stdout);
		return args.empty() ? 2 : 0;
	}
	for (const MemifApplication &application : kApplications) {
		if (application.name != args[0])
			continue;
		// getopt wants mutable, NUL-terminated strings.
		std::vector<std::string> storage;
		storage.emplace_back("softdpu memif " + std::string(application.name));
		for (std::string_view arg : args.subspan(1))
			storage.emplace_back(arg);
		std::vector<char *> argv;
		for (std::string &arg : storage)
			argv.push_back(arg.data());
		argv.push_back(nullptr);
		return application.main(static_cast<int>(storage.size()), argv.data());
	}
	std::fprintf(stderr, "softdpu memif: unknown application '%.*s'\n\n", static_cast<int>(args[0].size()),
		     args[0].data());
	print_memif_usage(stderr);
	return 2;
#else
	(void)args;
	std::fprintf(stderr, "softdpu memif: this build has no libmemif\n");
	return 1;
#endif
}

} // namespace softdpu::cli
