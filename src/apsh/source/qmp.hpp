// The RAM layout of a running QEMU guest, asked over its QMP socket: `qmp_capabilities`, then
// `human-monitor-command` with `info mtree -f`. The flat view of the "memory" address space
// lists each RAM piece as "start-end (prio N, ram): <backend> @<offset in the backend>".
// Everything QMP sends is untrusted (a socket that is not QMP, a hung QEMU): every wait is
// bounded, and the parsers are fuzzed (fuzz/apsh_qmp_fuzz.cpp).
#pragma once

#include "apsh/introspection.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace softdpu::apsh::source {

class QmpConnection;

Status error_status(doca_error_t code, std::string reason);

// One message (one line) QMP sent, parsed: the greeting, a command's return or error, or an
// asynchronous event. Untrusted text (a socket that is not QMP, a QEMU that answers garbage):
// fuzzed by fuzz/apsh_qmp_fuzz.cpp.
struct QmpMessage {
	enum class Kind { greeting, success, failure, event } kind = Kind::failure;
	std::string value;       // success: the "return" value as JSON text; event: the event name
	std::string error_class; // failure: "GenericError", ...
	std::string error_text;  // failure: QMP's "desc"
};
// Fails (naming what it got) on a line that is not one of those JSON objects.
Status parse_qmp_message(std::string_view line, QmpMessage &out);
// query-status's return value: whether the guest runs. Fails on anything else.
Status parse_qmp_run_state(std::string_view return_json, bool &running);
// Bound of every wait for one QMP reply, in ms (the whole reply, not each chunk of it).
inline constexpr int kQmpReplyTimeoutMs = 5000;

// A negotiated QMP session (greeting and qmp_capabilities done); every wait is bounded.
class QmpSession {
public:
	QmpSession();
	~QmpSession();
	Status open(const std::string &socket_path);
	// Runs an HMP command through human-monitor-command; its text in out.
	Status hmp(const std::string &command_line, std::string &out);
	// Runs a QMP command without arguments; its "return" value as JSON text in out (may be null).
	Status execute(const std::string &command, std::string *out = nullptr);

private:
	std::unique_ptr<QmpConnection> connection_;
	std::string socket_path_;
};

// A piece of guest RAM: GPAs [gpa_start, gpa_end) are the bytes from `offset` of RAM block `block`.
struct RamBlockPiece {
	std::string block;
	uint64_t gpa_start = 0;
	uint64_t gpa_end = 0; // exclusive
	uint64_t offset = 0;
};

// Parses `info mtree -f`: the pieces of guest RAM in the "memory" address space, merged where
// contiguous. Guest RAM is the RAM region covering the most bytes (pc.ram, or the machine's
// memory backend) and every region named in `backends` (memory-backend objects: NUMA nodes'
// memdevs, pc-dimm devices), with the ROM aliases of them (the legacy BIOS window). main_block,
// when not null, receives the largest one's name. Fails when the text has no such view or no RAM.
Status parse_mtree_ram_pieces(std::string_view text, const std::vector<std::string> &backends,
			      std::vector<RamBlockPiece> &out, std::string *main_block = nullptr);
// query-memdev's return value: the ids of the memory backends. Fails on anything else.
Status parse_qmp_memdev_ids(std::string_view return_json, std::vector<std::string> &out);

// HMP `xp /Nxg ADDRESS` text ("0000000000200000: 0x0123456789abcdef 0x...", lines of 8-byte words)
// as bytes, little-endian. Fails on a line it cannot read.
Status parse_hmp_xp_words(std::string_view text, std::vector<uint8_t> &out);

// Connects, negotiates and parses; every socket wait is bounded (a few seconds).
Status query_qmp_ram_ranges(const std::string &socket_path, std::vector<RamRange> &out);

// Parses `info mtree -f` text: the RAM backend's pieces in the "memory" address space, merged
// where contiguous. Fails when the text has no such view.
// backend, when not null, receives the RAM backend's name (the RAM block's id).
Status parse_mtree_ram_ranges(std::string_view text, std::vector<RamRange> &out, std::string *backend = nullptr);

} // namespace softdpu::apsh::source
