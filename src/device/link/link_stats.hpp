// Link counters (docs/links.md): a process that moves frames through one end of a link ("softdpu
// link attach") keeps rx/tx packets, bytes and drops of that end in a small file of the run-time
// directory, "<run dir>/links/<link>.<server|client>.stats", mapped into its memory: the data path
// updates the counters with plain relaxed atomic stores (one writer), never a system call, and any
// process maps the file read-only to read them. The keeper holds an OFD write lock (fcntl
// F_OFD_SETLK) on the file for its whole life: a reader that finds no lock (F_OFD_GETLK, which
// takes nothing) knows nobody keeps the counters (a keeper that was killed leaves a stale file
// behind, which the next keeper replaces by renaming a new file over it, never shrinking it).
#pragma once

#include "device/link/links.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace softdpu::device {

// One direction at one end of a link. The layout is softdpu_link_counters' (softdpu/link.h).
struct LinkCounters {
	uint64_t packets = 0;
	uint64_t bytes = 0;
	uint64_t drops = 0;
};

// rx: frames the end received from the link (drops: those it could not hand on);
// tx: frames it sent into the link (drops: those it had to send but could not).
struct LinkStats {
	LinkCounters rx;
	LinkCounters tx;
};

// "<run dir>/links/<link>.<server|client>.stats"
std::string link_stats_path(std::string_view run_dir, std::string_view link, LinkRole end);

// The keeper's side: the file created, locked and mapped; removed again by the destructor.
class LinkStatsFile {
public:
	enum class Error : uint8_t { none, in_use, system };
	struct Created {
		std::unique_ptr<LinkStatsFile> file; // null on failure
		Error error = Error::none;
		std::string reason; // why it failed: "in use by process 1234", "open(...): ..."
	};
	// Creates (or takes over a stale) file at path, owned by process pid, counters zero.
	static Created create(const std::string &path, uint32_t pid);
	~LinkStatsFile();
	LinkStatsFile(const LinkStatsFile &) = delete;
	LinkStatsFile &operator=(const LinkStatsFile &) = delete;

	// The mapped counters: the one writer updates them with relaxed atomic stores.
	LinkStats *stats() noexcept { return stats_; }

private:
	LinkStatsFile(std::string path, int fd, void *map) noexcept;
	std::string path_;
	int fd_ = -1;
	void *map_ = nullptr;
	LinkStats *stats_ = nullptr;
};

// A reader's view: the counters and their keeper's pid, or nullopt when no live process keeps
// the file at path (none, stale, or not a counters file).
struct LinkStatsReading {
	LinkStats stats;
	uint32_t pid = 0;
};
std::optional<LinkStatsReading> read_link_stats(const std::string &path);

} // namespace softdpu::device
