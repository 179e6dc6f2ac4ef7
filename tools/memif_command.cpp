// softdpu memif gen|sink|responder: the memif example applications of samples/memif on the
// command line. Each application parses its own options (getopt; --help is its own);
// argv[0] becomes "softdpu memif <name>".
#include "commands.hpp"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#if SOFTDPU_HAVE_MEMIF
#include "memif_app.h"
#endif

namespace softdpu::cli {

namespace {

#if SOFTDPU_HAVE_MEMIF
struct MemifApplication {
	const char *name;
	int (*main)(int, char **);
	const char *summary;
};

constexpr MemifApplication kApplications[] = {
    {"gen", memif_app_gen_main, "send numbered, patterned frames (rate, size, count; --echo checks them back)"},
    {"sink", memif_app_sink_main, "receive frames; check count, order and content; report rate and loss"},
    {"responder", memif_app_responder_main, "answer ARP requests and ping for an IPv4 address"},
};

int run_application(const MemifApplication &application, const std::vector<std::string> &args)
{
	// getopt wants mutable, NUL-terminated strings.
	std::vector<std::string> storage;
	storage.emplace_back("softdpu memif " + std::string(application.name));
	storage.insert(storage.end(), args.begin(), args.end());
	std::vector<char *> argv;
	argv.reserve(storage.size() + 1);
	for (std::string &arg : storage)
		argv.push_back(arg.data());
	argv.push_back(nullptr);
	return application.main(static_cast<int>(storage.size()), argv.data());
}
#endif

} // namespace

void add_memif_command(CLI::App &app)
{
	CLI::App *memif =
	    app.add_subcommand("memif", "gen | sink | responder: memif packet generator, sink, ARP/ping responder");
#if SOFTDPU_HAVE_MEMIF
	memif->require_subcommand(1);
	memif->footer("Each application has its own options: softdpu memif <application> --help.");
	for (const MemifApplication &application : kApplications) {
		CLI::App *sub = memif->add_subcommand(application.name, application.summary);
		// Everything after the application's name is its own (its --help included).
		sub->prefix_command();
		sub->set_help_flag();
		sub->callback([sub, &application] {
			if (int status = run_application(application, sub->remaining()); status != 0)
				throw CommandFailed{status};
		});
	}
#else
	memif->allow_extras();
	memif->callback([] {
		std::fprintf(stderr, "softdpu memif: this build has no libmemif\n");
		throw CommandFailed{1};
	});
#endif
}

} // namespace softdpu::cli
