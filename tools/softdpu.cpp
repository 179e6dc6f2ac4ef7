// softdpu: command line for the software DPU. main() builds the CLI11 application from the
// subcommands (commands.hpp), parses, and turns every failure into one message and exit status:
// 0 for --help and --version (on stdout), 2 for usage errors (the reason on the first line of
// stderr), the command's own status otherwise. "softdpu version" is "softdpu --version".
#include "cli_errors.hpp"
#include "commands.hpp"

#include <doca_log.h>
#include <doca_version.h>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace softdpu::cli {

namespace {

char sdk_log_buffer[4096];
doca_log_backend *sdk_backend = nullptr;

void on_sdk_record(char *record)
{
	std::string_view text(record);
	// "[time][pid][LEVEL][source][file:line][function] message": keep the level and the message.
	std::string level;
	if (size_t start = text.find("]["); start != std::string_view::npos) {
		start = text.find("][", start + 2);
		if (start != std::string_view::npos) {
			const size_t end = text.find(']', start + 2);
			if (end != std::string_view::npos)
				level = std::string(text.substr(start + 2, end - start - 2));
		}
	}
	if (const size_t end = text.find("] "); end != std::string_view::npos)
		text.remove_prefix(end + 2);
	while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
		text.remove_suffix(1);
	sdk_messages().push_back((level.empty() ? "" : level + ": ") + std::string(text));
}

} // namespace

std::vector<std::string> &sdk_messages()
{
	static std::vector<std::string> messages;
	return messages;
}

void set_sdk_log_level(uint32_t level)
{
	if (sdk_backend == nullptr &&
	    doca_log_backend_create_with_buffer_sdk(sdk_log_buffer, sizeof(sdk_log_buffer), on_sdk_record,
						    &sdk_backend) != DOCA_SUCCESS)
		sdk_backend = nullptr;
	if (sdk_backend != nullptr)
		doca_log_backend_set_sdk_level(sdk_backend, level);
}

void print_sdk_messages(const char *indent)
{
	for (const std::string &message : sdk_messages())
		std::fprintf(stderr, "%s%s\n", indent, message.c_str());
	sdk_messages().clear();
}

} // namespace softdpu::cli

// git describe of the source tree the program was built from, "" outside git (git_describe.cpp,
// written by cmake/git_describe.cmake).
extern const char softdpu_git_describe[];

namespace {

// The project's version (CMake's project(VERSION)), the DOCA API it implements (doca_version.h's
// major.minor), the DOCA release of the headers and of the libraries loaded, and the commit.
std::string version_text()
{
	std::string text = std::string("softdpu " SOFTDPU_VERSION " (DOCA ") + doca_version_runtime() + ")\n" +
			   "DOCA API: " + std::to_string(DOCA_VER_MAJOR) + "." + std::to_string(DOCA_VER_MINOR) +
			   " (headers " + doca_version() + ", libraries " + doca_version_runtime() + ")";
	if (softdpu_git_describe[0] != '\0')
		text += std::string("\ngit: ") + softdpu_git_describe;
	return text;
}

CLI::App *find_subcommand(CLI::App &app, std::string_view name)
{
	for (CLI::App *candidate : app.get_subcommands([](CLI::App *) { return true; }))
		if (candidate->get_name() == name)
			return candidate;
	return nullptr;
}

// The subcommand path the arguments name ("softdpu apsh"), for error messages.
std::string command_path(CLI::App &app, int argc, char **argv)
{
	std::string path = "softdpu";
	CLI::App *current = &app;
	for (int i = 1; i < argc; ++i) {
		const std::string_view arg = argv[i];
		if (arg.starts_with("-"))
			continue;
		CLI::App *sub = find_subcommand(*current, arg);
		if (sub == nullptr)
			continue;
		current = sub;
		path += " " + std::string(arg);
	}
	return path;
}

} // namespace

static int run(int argc, char **argv)
{
	CLI::App app{"Command line of softdpu, the software DPU (DOCA 2.5 API on ordinary Linux).", "softdpu"};
	app.set_version_flag("--version", version_text());
	app.require_subcommand(1);
	app.footer("environment: SOFTDPU_SIDE=host|dpu (default dpu), SOFTDPU_TOPOLOGY=FILE.json, SOFTDPU_RUN_DIR=DIR "
		   "(link sockets)\n"
		   "Every command has --help.");
	softdpu::cli::set_sdk_log_level(DOCA_LOG_LEVEL_WARNING);
	softdpu::cli::add_devices_command(app);
	softdpu::cli::add_topology_command(app);
	softdpu::cli::add_link_command(app);
	softdpu::cli::add_memif_command(app);
	softdpu::cli::add_run_command(app);
#ifdef SOFTDPU_HAVE_APSH
	softdpu::cli::add_apsh_command(app);
#endif
	app.add_subcommand("version", "the version (the same as --version)")->callback([] {
		std::printf("%s\n", version_text().c_str());
	});
	// "softdpu help" as before: the same as --help.
	char help_flag[] = "--help";
	if (argc == 2 && std::string_view(argv[1]) == "help")
		argv[1] = help_flag;
	argc = softdpu::cli::split_run_command(argc, argv);
	// An unknown command is named as such (CLI11 would only say a subcommand is required).
	if (argc > 1 && argv[1][0] != '-' && find_subcommand(app, argv[1]) == nullptr)
		return softdpu::cli::usage_failure("softdpu", "unknown command \"" + std::string(argv[1]) + "\"");
	try {
		app.parse(argc, argv);
	} catch (const CLI::CallForHelp &e) {
		return app.exit(e);
	} catch (const CLI::CallForAllHelp &e) {
		return app.exit(e);
	} catch (const CLI::CallForVersion &e) {
		return app.exit(e);
	} catch (const CLI::ParseError &e) {
		if (e.get_exit_code() == 0)
			return app.exit(e);
		return softdpu::cli::usage_failure(command_path(app, argc, argv), softdpu::cli::usage_message(e));
	} catch (const softdpu::cli::UsageError &e) {
		return softdpu::cli::usage_failure(command_path(app, argc, argv), e.message);
	} catch (const softdpu::cli::CommandFailed &e) {
		softdpu::cli::print_sdk_messages("  ");
		return e.status;
	}
	return 0;
}

int main(int argc, char **argv)
{
	return softdpu::cli::run_main("softdpu", run, argc, argv);
}
