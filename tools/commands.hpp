// Subcommands of the softdpu CLI, parsed with CLI11. Each file adds its subcommand (options,
// help text, and a callback that runs it) to the top-level application; softdpu.cpp lists them.
// A command fails by throwing CommandFailed (its exit status; the message is already printed) or,
// for usage errors found after parsing, UsageError (exit status 2, reason printed by main).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace softdpu::cli {

// Ends the program with `status` (1 for errors); the command has printed why.
struct CommandFailed {
	int status;
};

// A usage error found after parsing: main prints "softdpu <command>: <reason>" and exits with 2.
struct UsageError {
	std::string message;
};

// "--opt: expected a non-negative number" etc.: checks that main reports as usage errors.
[[noreturn]] inline void fail_usage(std::string message)
{
	throw UsageError{std::move(message)};
}

// SDK log capture (softdpu.cpp): the libraries explain failures in the SDK log. main() sends
// those records to a buffer instead of stderr, so no raw log line comes before a command's own
// message; a failing command prints them after its message (print_sdk_messages), indented.
// Level: warnings and worse unless a command asks for more.
std::vector<std::string> &sdk_messages();
void set_sdk_log_level(uint32_t level);
void print_sdk_messages(const char *indent);

void add_devices_command(CLI::App &app);
void add_topology_command(CLI::App &app);
void add_link_command(CLI::App &app);
void add_memif_command(CLI::App &app);
void add_apsh_command(CLI::App &app);
void add_run_command(CLI::App &app);
// "softdpu run [OPTIONS] [--] PROGRAM [ARGS...]": sets the program's words apart, so that CLI11
// never parses them; returns the argc CLI11 is to parse (argc unchanged for other commands).
int split_run_command(int argc, char **argv);

} // namespace softdpu::cli
