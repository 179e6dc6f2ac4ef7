// softdpu run [--side host|dpu] [--topology FILE] [--] PROGRAM [ARGS...]: runs PROGRAM (exec, so
// its exit status is the command's) with softdpu's RDMA libraries (libibverbs.so.1, and
// libmlx5.so.1 beside it) first on the loader's path, so that a program built against rdma-core
// uses softdpu's devices (docs/rdma.md). The library directory is found from where this
// executable lies: <prefix>/bin/softdpu uses <prefix>/<libdir>/softdpu-rdma; in the build tree,
// the build's softdpu-rdma directory.
#include "commands.hpp"

#include <softdpu/topology.h>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace softdpu::cli {

namespace {

struct RunOptions {
	std::string side;
	std::string topology;
	std::vector<std::string> command;
};

// The directories where softdpu's libibverbs may lie, relative to this executable's directory.
std::vector<std::filesystem::path> library_candidates()
{
	std::vector<std::filesystem::path> candidates;
	std::error_code error;
	const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
	if (error)
		return candidates;
	const std::filesystem::path here = self.parent_path();
	candidates.push_back((here / SOFTDPU_RDMA_FROM_BINDIR).lexically_normal());
#ifdef SOFTDPU_RDMA_FROM_BUILD_TOOLS
	candidates.push_back((here / SOFTDPU_RDMA_FROM_BUILD_TOOLS).lexically_normal());
#endif
	return candidates;
}

[[noreturn]] void fail(const std::string &message)
{
	std::fprintf(stderr, "softdpu run: %s\n", message.c_str());
	throw CommandFailed{1};
}

void run(const RunOptions &options)
{
	std::filesystem::path library_dir;
	std::string tried;
	for (const std::filesystem::path &candidate : library_candidates()) {
		std::error_code error;
		if (std::filesystem::is_regular_file(candidate / "libibverbs.so.1", error)) {
			library_dir = candidate;
			break;
		}
		tried += (tried.empty() ? "" : ", ") + candidate.string();
	}
	if (library_dir.empty())
		fail("softdpu's RDMA libraries are missing: no libibverbs.so.1 in " +
		     (tried.empty() ? std::string("(cannot locate the softdpu executable)") : tried));
	if (!options.topology.empty()) {
		char error[1024] = {};
		softdpu_topology_counts counts{};
		if (softdpu_topology_check_file(options.topology.c_str(), &counts, error, sizeof(error)) !=
		    DOCA_SUCCESS)
			fail("invalid topology: " + std::string(error));
		// Absolute, so that a program that changes directory still finds it.
		std::error_code error_code;
		const std::filesystem::path absolute = std::filesystem::absolute(options.topology, error_code);
		const std::string topology = error_code ? options.topology : absolute.lexically_normal().string();
		if (setenv("SOFTDPU_TOPOLOGY", topology.c_str(), 1) != 0)
			fail(std::string("setenv: ") + std::strerror(errno));
	}
	if (!options.side.empty() && setenv("SOFTDPU_SIDE", options.side.c_str(), 1) != 0)
		fail(std::string("setenv: ") + std::strerror(errno));
	const char *old_path = std::getenv("LD_LIBRARY_PATH");
	std::string path = library_dir.string();
	if (old_path != nullptr && *old_path != '\0')
		path += ":" + std::string(old_path);
	if (setenv("LD_LIBRARY_PATH", path.c_str(), 1) != 0)
		fail(std::string("setenv: ") + std::strerror(errno));

	std::vector<char *> argv;
	argv.reserve(options.command.size() + 1);
	for (const std::string &arg : options.command)
		argv.push_back(const_cast<char *>(arg.c_str()));
	argv.push_back(nullptr);
	std::fflush(nullptr);
	execvp(argv[0], argv.data());
	// As a shell says it: 127 when there is no such program, 126 when it cannot be run.
	const int error = errno;
	std::fprintf(stderr, "softdpu run: cannot run %s: %s\n", argv[0], std::strerror(error));
	throw CommandFailed{error == ENOENT ? 127 : 126};
}

std::vector<std::string> &program_words()
{
	static std::vector<std::string> words;
	return words;
}

} // namespace

int split_run_command(int argc, char **argv)
{
	if (argc < 2 || std::string_view(argv[1]) != "run")
		return argc;
	int end = argc; // CLI11 parses argv[0, end)
	int at = 2;
	for (; at < argc; ++at) {
		const std::string_view arg = argv[at];
		if (arg == "--") { // "--" itself is neither ours nor the program's
			end = at++;
			break;
		}
		if (!arg.starts_with("-")) { // the program's name
			end = at;
			break;
		}
		if ((arg == "--side" || arg == "--topology") && at + 1 < argc)
			++at; // the option's value (an unknown option is left to CLI11 to report)
	}
	for (int i = at; i < argc; ++i)
		program_words().emplace_back(argv[i]);
	return end;
}

void add_run_command(CLI::App &app)
{
	auto options = std::make_shared<RunOptions>();
	CLI::App *command = app.add_subcommand(
	    "run",
	    "run a program (built against rdma-core) on softdpu's RDMA devices: softdpu run -- PROGRAM [ARGS...]");
	command->add_option("--side", options->side, "the side the program runs as (sets SOFTDPU_SIDE)")
	    ->check(CLI::IsMember({"host", "dpu"}));
	command->add_option("--topology", options->topology, "a topology file (sets SOFTDPU_TOPOLOGY)");

	command->footer("LD_LIBRARY_PATH starts with softdpu's RDMA library directory; the program is exec'd, so its\n"
			"exit status is softdpu's. RDMA device: docs/rdma.md.");
	command->callback([options] {
		options->command = program_words();
		if (options->command.empty())
			fail_usage("missing program");
		run(*options);
	});
}

} // namespace softdpu::cli
