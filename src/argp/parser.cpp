#include "argp/parser.hpp"

#include "common/json_object.hpp"

#include <doca_log.h>
#include <doca_version.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace softdpu::argp {

namespace {

using nlohmann::json;

constexpr const char *kLevelHelp = "<10=DISABLE, 20=CRITICAL, 30=ERROR, 40=WARNING, 50=INFO, 60=DEBUG, 70=TRACE>";

// JSON section names of DOCA's configuration files; a file may also list the flags directly.
constexpr const char *kDpdkSection = "doca_dpdk_flags";
constexpr const char *kGeneralSection = "doca_general_flags";
constexpr const char *kProgramSection = "doca_program_flags";

Failure failure(doca_error_t code, std::string message)
{
	return Failure{code, std::move(message)};
}

std::string describe(const doca_argp_param &param)
{
	return param.long_name.empty() ? "-" + param.short_name : "--" + param.long_name;
}

std::optional<int> parse_int(std::string_view text)
{
	std::string copy(text);
	if (copy.empty())
		return std::nullopt;
	errno = 0;
	char *end = nullptr;
	long value = std::strtol(copy.c_str(), &end, 10);
	if (errno != 0 || *end != '\0' || value < INT_MIN || value > INT_MAX)
		return std::nullopt;
	return static_cast<int>(value);
}

std::optional<bool> parse_bool(std::string_view text)
{
	if (text == "true" || text == "1")
		return true;
	if (text == "false" || text == "0")
		return false;
	return std::nullopt;
}

bool is_log_level(int level)
{
	return level >= DOCA_LOG_LEVEL_DISABLE && level <= DOCA_LOG_LEVEL_TRACE;
}

const char *json_type_name(const json &value)
{
	return value.type_name();
}

} // namespace

Parser::Parser(std::string program_name, void *program_config)
    : program_name_(std::move(program_name)), program_config_(program_config)
{
}

const doca_argp_param *Parser::find_short(std::string_view name) const
{
	for (const auto &param : params_)
		if (!param->short_name.empty() && param->short_name == name)
			return param.get();
	return nullptr;
}

const doca_argp_param *Parser::find_long(std::string_view name) const
{
	for (const auto &param : params_)
		if (!param->long_name.empty() && param->long_name == name)
			return param.get();
	return nullptr;
}

bool Parser::name_taken(std::string_view short_name, std::string_view long_name) const
{
	static const std::string_view reserved_short[] = {"h", "v", "l", "j", "g"};
	static const std::string_view reserved_long[] = {"help",          "version", "log-level",
							 "sdk-log-level", "json",    "grpc-address"};
	if (!short_name.empty()) {
		for (auto name : reserved_short)
			if (short_name == name)
				return true;
		if (find_short(short_name) != nullptr)
			return true;
	}
	if (!long_name.empty()) {
		for (auto name : reserved_long)
			if (long_name == name)
				return true;
		if (find_long(long_name) != nullptr)
			return true;
	}
	return false;
}

doca_error_t Parser::register_param(std::unique_ptr<doca_argp_param> param, std::string &error)
{
	if (param->short_name.empty() && param->long_name.empty()) {
		error = "a flag needs a short or a long name";
		return DOCA_ERROR_INITIALIZATION;
	}
	if (param->description.empty() || param->callback == nullptr || param->type == DOCA_ARGP_TYPE_UNKNOWN ||
	    param->type > DOCA_ARGP_TYPE_JSON_OBJ) {
		error = "flag " + describe(*param) + " needs a description, a callback and a type";
		return DOCA_ERROR_INITIALIZATION;
	}
	if (name_taken(param->short_name, param->long_name)) {
		error = "flag " + describe(*param) + " reuses a name that is already taken";
		return DOCA_ERROR_ALREADY_EXIST;
	}
	params_.push_back(std::move(param));
	return DOCA_SUCCESS;
}

std::string Parser::usage() const
{
	std::ostringstream out;
	auto line = [&out](const std::string &names, const std::string &text) {
		std::string left = "  " + names;
		if (left.size() < 40)
			left.resize(40, ' ');
		else
			left += ' ';
		out << left << text << '\n';
	};
	out << "Usage: " << program_name_
	    << (dpdk_callback_ ? " [DPDK Flags] -- [DOCA Flags] [Program Flags]\n" : " [DOCA Flags] [Program Flags]\n");
	out << "\nDOCA Flags:\n";
	line("-h, --help", "Print a help synopsis");
	line("-v, --version", "Print program version information");
	line("-l, --log-level <level>", std::string("Set the (numeric) log level for the program ") + kLevelHelp);
	line("--sdk-log-level <level>", std::string("Set the SDK (numeric) log level for the program ") + kLevelHelp);
	line("-j, --json <path>", "Parse all command flags from an input json file");
	if (grpc_program_)
		line("-g, --grpc-address <address>", "Set the IP address (and port) of the gRPC server");
	if (!params_.empty())
		out << "\nProgram Flags:\n";
	for (const auto &param : params_) {
		std::string names;
		if (!param->short_name.empty())
			names += "-" + param->short_name;
		if (!param->long_name.empty())
			names += (names.empty() ? "--" : ", --") + param->long_name;
		if (!param->arguments.empty())
			names += " " + param->arguments;
		std::string text = param->description;
		if (param->mandatory)
			text += " (mandatory)";
		if (param->multiplicity)
			text += " (may repeat)";
		if (param->cli_only)
			text += " (command line only)";
		line(names, text);
	}
	return out.str();
}

void Parser::print_help_and_exit() const
{
	std::fputs(usage().c_str(), stdout);
	std::fflush(stdout);
	std::exit(EXIT_SUCCESS);
}

void Parser::print_version_and_exit() const
{
	if (version_callback_ != nullptr) {
		version_callback_(nullptr, program_config_);
	} else {
		std::printf("%s version %s\nDOCA SDK version (Compilation): %s\nDOCA SDK version (Runtime): %s\n",
			    program_name_.c_str(), DOCA_VER_STRING, doca_version(), doca_version_runtime());
	}
	std::fflush(stdout);
	std::exit(EXIT_SUCCESS);
}

std::optional<Failure> Parser::parse_command_line(const std::vector<std::string> &args, Assignments &out,
						  std::optional<std::string> &json_path)
{
	for (size_t i = 0; i < args.size(); ++i) {
		const std::string &token = args[i];
		std::string name;
		std::optional<std::string> attached; // value given as --name=value or -xVALUE
		const doca_argp_param *param = nullptr;
		Builtin builtin = Builtin::none;

		if (token.rfind("--", 0) == 0 && token.size() > 2) {
			name = token.substr(2);
			if (auto eq = name.find('='); eq != std::string::npos) {
				attached = name.substr(eq + 1);
				name.resize(eq);
			}
			static const std::pair<std::string_view, Builtin> long_builtins[] = {
			    {"help", Builtin::help},           {"version", Builtin::version},
			    {"log-level", Builtin::log_level}, {"sdk-log-level", Builtin::sdk_log_level},
			    {"json", Builtin::json},           {"grpc-address", Builtin::grpc_address}};
			for (auto [builtin_name, kind] : long_builtins)
				if (name == builtin_name)
					builtin = kind;
			if (builtin == Builtin::none)
				param = find_long(name);
		} else if (token.size() > 1 && token[0] == '-' && token != "--") {
			name = token.substr(1);
			static const std::pair<std::string_view, Builtin> short_builtins[] = {
			    {"h", Builtin::help},
			    {"v", Builtin::version},
			    {"l", Builtin::log_level},
			    {"j", Builtin::json},
			    {"g", Builtin::grpc_address}};
			auto match = [&](std::string_view candidate) {
				for (auto [builtin_name, kind] : short_builtins)
					if (candidate == builtin_name)
						return std::make_pair(static_cast<const doca_argp_param *>(nullptr),
								      kind);
				return std::make_pair(find_short(candidate), Builtin::none);
			};
			std::tie(param, builtin) = match(name);
			// getopt style "-p7": a one-letter flag with its value attached.
			if (param == nullptr && builtin == Builtin::none && name.size() > 1) {
				std::tie(param, builtin) = match(name.substr(0, 1));
				if (param != nullptr || builtin != Builtin::none) {
					attached = name.substr(1);
					name.resize(1);
				}
			}
		} else {
			return failure(DOCA_ERROR_NOT_SUPPORTED, "unexpected argument \"" + token + "\"");
		}
		if (builtin == Builtin::grpc_address && !grpc_program_)
			builtin = Builtin::none;
		if (param == nullptr && builtin == Builtin::none)
			return failure(DOCA_ERROR_NOT_SUPPORTED, "unknown flag \"" + token + "\"");

		if (builtin == Builtin::help)
			print_help_and_exit();
		if (builtin == Builtin::version)
			print_version_and_exit();

		const bool takes_value = builtin != Builtin::none || param->type != DOCA_ARGP_TYPE_BOOLEAN;
		std::string value;
		if (attached) {
			value = *attached;
		} else if (takes_value) {
			if (i + 1 >= args.size())
				return failure(DOCA_ERROR_INVALID_VALUE, "flag \"" + token + "\" needs a value");
			value = args[++i];
		}

		Assignment assignment{param, builtin, Origin::command_line, {}, 0, false};
		switch (builtin) {
		case Builtin::log_level:
		case Builtin::sdk_log_level: {
			auto level = parse_int(value);
			if (!level || !is_log_level(*level))
				return failure(DOCA_ERROR_INVALID_VALUE, "flag \"" + token + "\" expects a log level " +
									     kLevelHelp + ", got \"" + value + "\"");
			assignment.integer = *level;
			break;
		}
		case Builtin::json:
			if (json_path)
				return failure(DOCA_ERROR_INVALID_VALUE, "only one JSON file may be given");
			json_path = value;
			continue;
		case Builtin::grpc_address:
			assignment.text = value;
			break;
		default:
			switch (param->type) {
			case DOCA_ARGP_TYPE_STRING:
				assignment.text = value;
				break;
			case DOCA_ARGP_TYPE_INT: {
				auto number = parse_int(value);
				if (!number)
					return failure(DOCA_ERROR_INVALID_VALUE, "flag \"" + token +
										     "\" expects an integer, got \"" +
										     value + "\"");
				assignment.integer = *number;
				break;
			}
			case DOCA_ARGP_TYPE_BOOLEAN: {
				auto flag = attached ? parse_bool(value) : std::optional<bool>(true);
				if (!flag)
					return failure(DOCA_ERROR_INVALID_VALUE,
						       "flag \"" + token + "\" expects true or false, got \"" + value +
							   "\"");
				assignment.boolean = *flag;
				break;
			}
			default:
				return failure(DOCA_ERROR_NOT_SUPPORTED,
					       "flag \"" + token +
						   "\" takes a JSON object and can only be set from a JSON file");
			}
		}
		out.push_back(std::move(assignment));
	}
	return std::nullopt;
}

std::optional<Failure> Parser::parse_json_text(std::string_view text, Assignments &out)
{
	if (softdpu::json::nesting_depth(text) > kMaxJsonDepth)
		return failure(DOCA_ERROR_IO_FAILED,
			       "JSON file nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
	json document;
	try {
		// A repeated key is not refused: its last value counts (nlohmann's rule), as it always did.
		document = softdpu::json::parse(text, {.max_depth = kMaxJsonDepth, .reject_duplicate_keys = false});
	} catch (const softdpu::json::SyntaxError &error) {
		return failure(DOCA_ERROR_IO_FAILED, "JSON file is not valid JSON" + error.detail);
	} catch (const softdpu::json::Error &error) {
		return failure(DOCA_ERROR_IO_FAILED, "JSON file: " + error.path + ": " + error.what());
	}
	const softdpu::json::DismantledOnExit dismantled(document);
	if (!document.is_object())
		return failure(DOCA_ERROR_INVALID_VALUE,
			       "JSON file must hold an object, not " + std::string(json_type_name(document)));

	// One JSON value of a flag (an array element for multi-value flags) into an assignment.
	auto convert = [&](const std::string &key, const doca_argp_param *param, Builtin builtin,
			   const json &value) -> std::optional<Failure> {
		Assignment assignment{param, builtin, Origin::json, {}, 0, false};
		auto wrong_type = [&](const char *expected) {
			return failure(DOCA_ERROR_INVALID_VALUE, "JSON key \"" + key + "\" expects " + expected +
								     ", got " + json_type_name(value));
		};
		auto as_int = [&]() -> std::optional<int> {
			if (value.is_number_integer() && !value.is_number_unsigned()) {
				auto number = value.get<json::number_integer_t>();
				if (number >= INT_MIN && number <= INT_MAX)
					return static_cast<int>(number);
			} else if (value.is_number_unsigned()) {
				auto number = value.get<json::number_unsigned_t>();
				if (number <= static_cast<json::number_unsigned_t>(INT_MAX))
					return static_cast<int>(number);
			}
			return std::nullopt;
		};
		if (builtin == Builtin::log_level || builtin == Builtin::sdk_log_level) {
			auto level = as_int();
			if (!level || !is_log_level(*level))
				return wrong_type("a log level between 10 and 70");
			assignment.integer = *level;
		} else if (builtin == Builtin::grpc_address) {
			if (!value.is_string())
				return wrong_type("a string");
			assignment.text = value.get<std::string>();
		} else {
			switch (param->type) {
			case DOCA_ARGP_TYPE_STRING:
				if (!value.is_string())
					return wrong_type("a string");
				assignment.text = value.get<std::string>();
				break;
			case DOCA_ARGP_TYPE_INT: {
				auto number = as_int();
				if (!number)
					return wrong_type("an integer in the range of int");
				assignment.integer = *number;
				break;
			}
			case DOCA_ARGP_TYPE_BOOLEAN:
				if (!value.is_boolean())
					return wrong_type("true or false");
				assignment.boolean = value.get<bool>();
				break;
			default:
				assignment.text = value.dump();
				break;
			}
		}
		out.push_back(std::move(assignment));
		return std::nullopt;
	};

	auto apply_flags = [&](const json &object, bool program_flags_allowed,
			       bool builtins_allowed) -> std::optional<Failure> {
		for (const auto &[key, value] : object.items()) {
			Builtin builtin = Builtin::none;
			const doca_argp_param *param = nullptr;
			if (builtins_allowed && key == "log-level")
				builtin = Builtin::log_level;
			else if (builtins_allowed && key == "sdk-log-level")
				builtin = Builtin::sdk_log_level;
			else if (builtins_allowed && grpc_program_ && key == "grpc-address")
				builtin = Builtin::grpc_address;
			else if (program_flags_allowed)
				param = find_long(key);
			if (builtin == Builtin::none && param == nullptr)
				return failure(DOCA_ERROR_NOT_SUPPORTED, "unknown JSON key \"" + key + "\"");
			if (param != nullptr && param->cli_only)
				return failure(DOCA_ERROR_NOT_SUPPORTED,
					       "flag \"" + key + "\" can only be given on the command line");
			if (param != nullptr && param->multiplicity && value.is_array()) {
				for (const auto &element : value)
					if (auto error = convert(key, param, builtin, element))
						return error;
			} else if (auto error = convert(key, param, builtin, value)) {
				return error;
			}
		}
		return std::nullopt;
	};

	const bool sectioned =
	    document.contains(kDpdkSection) || document.contains(kGeneralSection) || document.contains(kProgramSection);
	if (!sectioned)
		return apply_flags(document, true, true);

	for (const auto &[key, section] : document.items()) {
		if (!section.is_object())
			return failure(DOCA_ERROR_INVALID_VALUE, "JSON section \"" + key + "\" must be an object");
		if (key == kGeneralSection) {
			if (auto error = apply_flags(section, false, true))
				return error;
		} else if (key == kProgramSection) {
			if (auto error = apply_flags(section, true, false))
				return error;
		} else if (key == kDpdkSection) {
			// Forwarded as "--key value" pairs (arrays repeat the key, true is a bare flag).
			for (const auto &entry : section.items()) {
				// Named references rather than structured bindings: Clang 14 cannot capture those.
				const std::string &flag = entry.key();
				const json &value = entry.value();
				auto forward = [&](const json &item) -> std::optional<Failure> {
					if (item.is_boolean()) {
						if (item.get<bool>())
							dpdk_args_.push_back("--" + flag);
					} else if (item.is_string()) {
						dpdk_args_.push_back("--" + flag);
						dpdk_args_.push_back(item.get<std::string>());
					} else if (item.is_number()) {
						dpdk_args_.push_back("--" + flag);
						dpdk_args_.push_back(item.dump());
					} else {
						return failure(DOCA_ERROR_INVALID_VALUE,
							       "DPDK flag \"" + flag +
								   "\" must be a string, number or boolean");
					}
					return std::nullopt;
				};
				if (value.is_array()) {
					for (const auto &item : value)
						if (auto error = forward(item))
							return error;
				} else if (auto error = forward(value)) {
					return error;
				}
			}
		} else {
			return failure(DOCA_ERROR_NOT_SUPPORTED, "unknown JSON section \"" + key + "\"");
		}
	}
	return std::nullopt;
}

std::optional<Failure> Parser::parse_json_file(const std::string &path, Assignments &out)
{
	std::ifstream file(path, std::ios::binary);
	if (!file)
		return failure(DOCA_ERROR_IO_FAILED, "cannot open JSON file \"" + path + "\"");
	std::ostringstream content;
	content << file.rdbuf();
	if (file.bad())
		return failure(DOCA_ERROR_IO_FAILED, "cannot read JSON file \"" + path + "\"");
	auto error = parse_json_text(content.str(), out);
	if (error)
		error->message = path + ": " + error->message;
	return error;
}

std::optional<Failure> Parser::finish(Assignments json_assignments, Assignments command_line)
{
	// A flag given in the JSON file and again on the command line takes the command line value;
	// a single-value flag given twice from the same source is an error.
	Assignments merged;
	auto same_flag = [](const Assignment &a, const Assignment &b) {
		return a.param == b.param && a.builtin == b.builtin;
	};
	for (Assignments *source : {&json_assignments, &command_line}) {
		for (Assignment &assignment : *source) {
			const bool multiple = assignment.param != nullptr && assignment.param->multiplicity;
			bool replaced = false;
			if (!multiple) {
				for (Assignment &earlier : merged) {
					if (!same_flag(earlier, assignment))
						continue;
					if (earlier.origin == assignment.origin) {
						std::string name = assignment.param ? describe(*assignment.param)
										    : std::string("a DOCA flag");
						return failure(DOCA_ERROR_INVALID_VALUE,
							       "flag " + name + " may be given only once");
					}
					earlier = assignment;
					replaced = true;
				}
			} else if (assignment.origin == Origin::command_line) {
				// Values from the command line replace the JSON list instead of extending it.
				std::erase_if(merged, [&](const Assignment &earlier) {
					return same_flag(earlier, assignment) && earlier.origin == Origin::json;
				});
			}
			if (!replaced)
				merged.push_back(std::move(assignment));
		}
	}

	for (const auto &param : params_) {
		if (!param->mandatory)
			continue;
		bool given = false;
		for (const Assignment &assignment : merged)
			given = given || assignment.param == param.get();
		if (!given)
			return failure(DOCA_ERROR_INVALID_VALUE, "missing mandatory flag " + describe(*param));
	}

	for (const Assignment &assignment : merged) {
		switch (assignment.builtin) {
		case Builtin::log_level:
			log_level_ = assignment.integer;
			doca_log_level_set_global_lower_limit(static_cast<uint32_t>(assignment.integer));
			continue;
		case Builtin::sdk_log_level:
			sdk_log_level_ = assignment.integer;
			doca_log_level_set_global_sdk_limit(static_cast<uint32_t>(assignment.integer));
			continue;
		case Builtin::grpc_address:
			grpc_address_ = assignment.text;
			continue;
		default:
			break;
		}
		// The callback gets a copy, so a program that keeps the pointer cannot corrupt the parser.
		std::string text = assignment.text;
		int integer = assignment.integer;
		bool boolean = assignment.boolean;
		void *value = nullptr;
		switch (assignment.param->type) {
		case DOCA_ARGP_TYPE_INT:
			value = &integer;
			break;
		case DOCA_ARGP_TYPE_BOOLEAN:
			value = &boolean;
			break;
		default:
			value = text.data();
			break;
		}
		doca_error_t result = assignment.param->callback(value, program_config_);
		if (result != DOCA_SUCCESS)
			return failure(result, "handling flag " + describe(*assignment.param) +
						   " failed: " + doca_error_get_descr(result));
	}

	if (validation_callback_ != nullptr) {
		doca_error_t result = validation_callback_(program_config_);
		if (result != DOCA_SUCCESS)
			return failure(result, std::string("the program rejected its configuration: ") +
						   doca_error_get_descr(result));
	}

	if (dpdk_callback_ != nullptr) {
		dpdk_argv_.clear();
		for (std::string &arg : dpdk_args_)
			dpdk_argv_.push_back(arg.data());
		dpdk_argv_.push_back(nullptr); // argv convention: argv[argc] is NULL
		doca_error_t result = dpdk_callback_(static_cast<int>(dpdk_args_.size()), dpdk_argv_.data());
		if (result != DOCA_SUCCESS)
			return failure(result,
				       std::string("the DPDK callback failed: ") + doca_error_get_descr(result));
	}
	return std::nullopt;
}

std::optional<Failure> Parser::start(int argc, char **argv)
{
	std::vector<std::string> args;
	dpdk_args_.clear();
	dpdk_args_.push_back(argc > 0 && argv[0] ? argv[0] : program_name_);
	bool after_separator = dpdk_callback_ == nullptr;
	bool has_separator = false;
	for (int i = 1; i < argc; ++i)
		has_separator = has_separator || std::string_view(argv[i]) == "--";
	// With a DPDK program, everything before "--" belongs to DPDK; without "--" it gets nothing.
	if (!has_separator)
		after_separator = true;
	for (int i = 1; i < argc; ++i) {
		std::string_view arg = argv[i] ? argv[i] : "";
		if (!after_separator) {
			if (arg == "--")
				after_separator = true;
			else
				dpdk_args_.emplace_back(arg);
			continue;
		}
		args.emplace_back(arg);
	}

	Assignments command_line;
	Assignments from_json;
	std::optional<std::string> json_path;
	if (auto error = parse_command_line(args, command_line, json_path))
		return error;
	if (json_path)
		if (auto error = parse_json_file(*json_path, from_json))
			return error;
	return finish(std::move(from_json), std::move(command_line));
}

std::optional<Failure> Parser::start_from_json_text(std::string_view text)
{
	dpdk_args_.assign(1, program_name_);
	Assignments from_json;
	if (auto error = parse_json_text(text, from_json))
		return error;
	return finish(std::move(from_json), {});
}

} // namespace softdpu::argp
