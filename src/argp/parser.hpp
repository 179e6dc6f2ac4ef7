// The argument parser behind doca_argp.h: parameters, command line and JSON parsing, usage text.
#pragma once

#include <doca_argp.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The opaque public type is a plain record of what the program set.
struct doca_argp_param {
	std::string short_name;
	std::string long_name;
	std::string arguments;
	std::string description;
	doca_argp_param_cb_t callback = nullptr;
	doca_argp_type type = DOCA_ARGP_TYPE_UNKNOWN;
	bool mandatory = false;
	bool cli_only = false;
	bool multiplicity = false;
};

namespace softdpu::argp {

// Flags the parser itself handles ("DOCA Flags").
enum class Builtin { none, help, version, log_level, sdk_log_level, json, grpc_address };

// A parse failure: the DOCA error plus a message for the user.
struct Failure {
	doca_error_t code;
	std::string message;
};

class Parser {
public:
	Parser(std::string program_name, void *program_config);

	doca_error_t register_param(std::unique_ptr<doca_argp_param> param, std::string &error);
	void set_version_callback(doca_argp_param_cb_t callback) { version_callback_ = callback; }
	void set_validation_callback(doca_argp_validation_cb_t callback) { validation_callback_ = callback; }
	void set_dpdk_callback(doca_argp_dpdk_cb_t callback) { dpdk_callback_ = callback; }
	void set_grpc_program() { grpc_program_ = true; }

	// Parses, then runs the callbacks. Help and version print and exit the process.
	std::optional<Failure> start(int argc, char **argv);
	// The JSON-file path of start() on a text already in memory (also the fuzz entry point).
	std::optional<Failure> start_from_json_text(std::string_view text);

	std::string usage() const;
	const std::optional<std::string> &grpc_address() const { return grpc_address_; }
	std::optional<int> log_level() const { return log_level_; }
	std::optional<int> sdk_log_level() const { return sdk_log_level_; }

private:
	enum class Origin { json, command_line };
	struct Assignment {
		const doca_argp_param *param; // nullptr for built-in flags
		Builtin builtin;
		Origin origin;
		std::string text; // STRING, JSON_OBJ (as JSON text), built-in string values
		int integer = 0;
		bool boolean = false;
	};
	using Assignments = std::vector<Assignment>;

	std::optional<Failure> parse_command_line(const std::vector<std::string> &args, Assignments &out,
						  std::optional<std::string> &json_path);
	std::optional<Failure> parse_json_text(std::string_view text, Assignments &out);
	std::optional<Failure> parse_json_file(const std::string &path, Assignments &out);
	std::optional<Failure> finish(Assignments json, Assignments command_line);

	const doca_argp_param *find_short(std::string_view name) const;
	const doca_argp_param *find_long(std::string_view name) const;
	bool name_taken(std::string_view short_name, std::string_view long_name) const;

	[[noreturn]] void print_help_and_exit() const;
	[[noreturn]] void print_version_and_exit() const;

	std::string program_name_;
	void *program_config_;
	std::vector<std::unique_ptr<doca_argp_param>> params_;
	doca_argp_param_cb_t version_callback_ = nullptr;
	doca_argp_validation_cb_t validation_callback_ = nullptr;
	doca_argp_dpdk_cb_t dpdk_callback_ = nullptr;
	bool grpc_program_ = false;

	std::optional<std::string> grpc_address_;
	std::optional<int> log_level_;
	std::optional<int> sdk_log_level_;
	// DPDK arguments handed to the callback; they live until doca_argp_destroy.
	std::vector<std::string> dpdk_args_;
	std::vector<char *> dpdk_argv_;
};

// Deepest bracket nesting accepted in a JSON file; deeper documents are rejected before parsing.
inline constexpr size_t kMaxJsonDepth = 64;

} // namespace softdpu::argp
