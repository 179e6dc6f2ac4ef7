// Usage errors of the command-line tools, worded one way for all of them (CLI11 parses): the
// reason first, "<program>: <reason>" on stderr, then where help is; exit status 2.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

namespace softdpu::cli {

// CLI11's wording, made to say what went wrong first and in the tools' terms.
inline std::string usage_message(const CLI::ParseError &error)
{
	std::string what = error.what();
	const std::string name = error.get_name();
	if (name == "ArgumentMismatch" && what.find(" required ") != std::string::npos && what.ends_with(" missing"))
		return what.substr(0, what.find(':')) + " needs a value"; // "--memory: 1 required TEXT missing"
	static constexpr std::string_view kPrefixes[] = {"The following argument was not expected: ",
							 "The following arguments were not expected: "};
	for (std::string_view prefix : kPrefixes) {
		if (what.starts_with(prefix)) {
			const std::string arg = what.substr(prefix.size());
			return (arg.starts_with("-") ? "unknown option \"" : "unexpected argument \"") + arg + "\"";
		}
	}
	if (name == "RequiredError" && what == "A subcommand is required")
		return "missing command";
	if (name == "RequiredError" && what.ends_with(" is required") && what.find(' ') == what.size() - 12)
		return "missing " + what.substr(0, what.size() - 12); // "query is required"
	return what;
}

inline int usage_failure(const std::string &program, const std::string &message)
{
	std::fprintf(stderr, "%s: %s\n(%s --help for usage)\n", program.c_str(), message.c_str(), program.c_str());
	return 2;
}

// Parses; on --help/--version prints them (stdout) and returns 0; on a usage error prints it
// and returns 2; returns -1 when the program should go on.
inline int parse_command_line(CLI::App &app, int argc, char **argv)
{
	try {
		app.parse(argc, argv);
	} catch (const CLI::ParseError &e) {
		if (e.get_exit_code() == 0)
			return app.exit(e);
		return usage_failure(app.get_name(), usage_message(e));
	}
	return -1;
}

// A tool's main: runs run(argc, argv) and returns its status. Whatever escapes it (running out
// of memory, a library error) ends the tool with "<program>: <reason>" and status 1, never with
// std::terminate.
inline int run_main(const char *program, int (*run)(int, char **), int argc, char **argv) noexcept
{
	try {
		return run(argc, argv);
	} catch (const std::exception &error) {
		std::fprintf(stderr, "%s: %s\n", program, error.what());
	} catch (...) {
		std::fprintf(stderr, "%s: unexpected error\n", program);
	}
	return 1;
}

} // namespace softdpu::cli
