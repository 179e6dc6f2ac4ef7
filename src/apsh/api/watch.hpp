// The continuous watch behind softdpu_apsh_watch (softdpu/apsh.h; C forwarders in watch_api.cpp).
//
// A WatchState is what one poll saw, each kind keyed by its identity (softdpu/apsh.h): processes by
// pid + start time (+ task address), modules by name + address, listening sockets by network
// namespace + protocol + family + address + port, attestation failures, YARA matches and injections
// by their process and address. diff_states compares two states; Watch reads the guest into a state
// (reusing its buffers) and keeps the last one that was read completely. The refresh is
// incremental: a poll is one batch of queries (LinuxSystem::begin_batch: they share a page cache),
// one walk of a process's areas serves every kind, each guest-physical frame is read at most once
// per poll and many per read (LinuxSystem::user_page_frames / read_frames, where the reader gives
// frames) into a FrameTable, areas with the frames of one already seen take its results
// (FrameListMemo), attestation keeps digests by frame (PageDigestCache), and YARA keeps the last
// poll's matches by area contents (AreaFingerprint).
#pragma once

#include "apsh/api/attestation.hpp"
#include "apsh/api/exec_hash.hpp"
#include "apsh/api/system.hpp"
#include "apsh/api/yara_scan.hpp"
#include "apsh/introspection.hpp"

#include <softdpu/apsh.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace softdpu::apsh::api {

struct WatchEvent {
	softdpu_apsh_watch_event_type type = SOFTDPU_APSH_WATCH_PROCESS_STARTED;
	uint64_t timestamp_ns = 0;
	uint32_t pid = 0;
	uint32_t ppid = 0;
	uint64_t start_time_ns = 0;
	std::string comm;
	bool kernel_thread = false;
	std::string name;
	uint64_t address = 0;
	uint64_t size = 0;
	std::string path;
	std::string protection;
	uint32_t pages_present = 0;
	uint32_t matching_pages = 0;
	std::string protocol;
	int ip_version = 0;
	std::string local_addr;
	uint16_t local_port = 0;
	uint32_t net_ns = 0;
};

// The keys order themselves with a defaulted <=> (std::map keys); clang-tidy 14 reads the 0 it
// compares the synthesized ordering with as a null pointer constant, hence the NOLINTs.

// A process's identity: a pid reused by another process has another start time (and, where the
// kernel does not record one, usually another task_struct).
struct ProcessKey {
	uint32_t pid = 0;
	uint64_t start_time_ns = 0;
	uint64_t task = 0;
	auto operator<=>(const ProcessKey &) const = default; // NOLINT(modernize-use-nullptr)
};

struct ModuleKey {
	std::string name;
	uint64_t address = 0;
	auto operator<=>(const ModuleKey &) const = default; // NOLINT(modernize-use-nullptr)
};

struct SocketKey {
	uint32_t net_ns = 0;
	int protocol = 0;
	int family = 0;
	std::string local_addr;
	uint16_t local_port = 0;
	auto operator<=>(const SocketKey &) const = default; // NOLINT(modernize-use-nullptr)
};

// Something found in a process at an address (an area, a YARA window); name: the rule, if any.
struct FindingKey {
	ProcessKey process;
	uint64_t address = 0;
	std::string name;
	auto operator<=>(const FindingKey &) const = default; // NOLINT(modernize-use-nullptr)
};

struct WatchState {
	std::map<ProcessKey, WatchEvent> processes;
	std::map<ModuleKey, WatchEvent> modules;
	std::map<SocketKey, WatchEvent> sockets;
	std::map<FindingKey, WatchEvent> attestation_failures;
	std::map<FindingKey, WatchEvent> yara_matches;
	std::map<FindingKey, WatchEvent> injections;

	void clear();
};

// The events that lead from `before` to `after` (see softdpu_apsh_watch_poll for the order), each
// stamped with timestamp_ns. Only kinds in `kinds` (SOFTDPU_APSH_WATCH_KIND_* bits) are compared.
void diff_states(const WatchState &before, const WatchState &after, uint32_t kinds, uint64_t timestamp_ns,
		 std::vector<WatchEvent> &events);

// The identities of guest records, and the events they stand for (timestamp left 0).
ProcessKey process_key(const Process &process);
WatchEvent process_event(const Process &process);
WatchEvent module_event(const Module &module);
// Whether the connection is a listening one (TCP LISTEN, or UDP bound and unconnected).
bool is_listening(const Connection &connection);
SocketKey socket_key(const Connection &connection);
WatchEvent socket_event(const Connection &connection);

// A keyed 128-bit fingerprint of memory contents (not cryptographic: the key is drawn at random per
// watch, so that contents cannot be chosen to keep a fingerprint while changing). The watch keeps
// fingerprints, not copies, of what it scanned; two different contents share one with a chance of
// about 2^-128 per pair.
struct Fingerprint {
	uint64_t lo = 0;
	uint64_t hi = 0;
	bool operator==(const Fingerprint &) const = default;
};

struct FingerprintKey {
	uint64_t k0 = 0, k1 = 0, k2 = 0, k3 = 0;
	static FingerprintKey random();
};

Fingerprint page_fingerprint(std::span<const uint8_t, kPageSize> page, const FingerprintKey &key) noexcept;

// The fingerprint of an area's contents, built page by page in order: each page is present (with
// its page fingerprint) or not. Two areas with the same pages in the same order, present or not,
// have the same fingerprint.
class AreaFingerprint {
public:
	explicit AreaFingerprint(const FingerprintKey &key) noexcept;
	void add_present(const Fingerprint &page) noexcept;
	void add_absent() noexcept;
	Fingerprint value() const noexcept;
	uint64_t pages() const noexcept { return pages_; }

private:
	void mix(uint64_t a, uint64_t b) noexcept;
	uint64_t s0_, s1_;
	uint64_t pages_ = 0;
};

// A poll's table of guest-physical frames and what is known of each (its YARA fingerprint, its
// attestation digest): open addressing, kept from poll to poll; clear() forgets every frame in
// constant time (entries of older polls count as empty).
class FrameTable {
public:
	static constexpr uint8_t kFingerprint = 1;
	static constexpr uint8_t kDigest = 2;
	struct Entry {
		uint64_t frame = 0;
		uint32_t generation = 0; // the poll that filled it; 0: never
		uint8_t have = 0;        // kFingerprint / kDigest known
		uint8_t pending = 0;     // asked for, not read yet
		uint8_t used = 0;        // handed out at least once (WatchStats)
		Fingerprint fingerprint;
		Sha256Digest digest{};
	};
	void clear() noexcept;
	Entry *find(uint64_t frame) noexcept;
	// The frame's entry, added when new (invalidates pointers to other entries when it grows).
	Entry &at(uint64_t frame);
	size_t size() const noexcept { return size_; }

private:
	size_t home(uint64_t frame) const noexcept;
	void grow();
	std::vector<Entry> entries_; // a power of two, at most half full
	uint32_t generation_ = 1;
	size_t size_ = 0;
};

// Areas of one poll by their frames: two areas (of two processes, a library's text) with the same
// frames in the same order, absent pages in the same places, hold the same bytes in that poll, so
// what a kind made of one (a fingerprint, attestation counts) holds for the other. Entries are
// matched exactly (tags and every frame compared), never by hash alone; clear() forgets a poll.
class FrameListMemo {
public:
	void clear();
	// The entry of (tag_a, tag_b, frames); added is true when it was new (the caller fills its
	// result at that index). Indexes count from 0 in the order entries were added.
	size_t find_or_add(uint64_t tag_a, uint64_t tag_b, std::span<const uint64_t> frames, bool &added);
	size_t size() const noexcept { return entries_.size(); }

private:
	struct Entry {
		uint64_t tag_a = 0, tag_b = 0;
		size_t frames_at = 0, count = 0;
		uint32_t next = ~uint32_t{0}; // the next entry with the same bucket
	};
	std::vector<Entry> entries_;
	std::vector<uint64_t> frames_;
	std::vector<uint32_t> buckets_; // a power of two; ~0: empty
};

// What the incremental refresh saved (for tests and benchmarks): counts since the watch was created.
struct WatchStats {
	uint64_t frames_read = 0;        // frames read (attestation and YARA), once per frame and poll
	uint64_t frames_reused = 0;      // pages whose frame was already read in the same poll
	uint64_t yara_areas_scanned = 0; // areas whose contents were new: read and scanned
	uint64_t yara_areas_reused = 0;  // areas whose contents were scanned before: their matches reused
};

class Watch {
public:
	Watch(std::shared_ptr<System> system, uint32_t kinds) : system_(std::move(system)), kinds_(kinds) {}

	// The hash map for attestation (load_exec_hash_map's errors).
	Status set_hash_map(const std::string &path);
	// The YARA rules (filter: rule names that count; empty: all) and scan type (checked by the caller).
	void set_yara(std::shared_ptr<YaraRules> rules, RuleFilter filter, uint64_t scan_type);

	// BAD_STATE when a watched kind lacks its hash map or rules.
	Status ready() const;
	// Reads the guest and appends the changes since the last successful poll to events (none on the
	// first). On error the state is that of the last successful poll. Takes the system's lock.
	Status poll(std::vector<WatchEvent> &events);

	uint32_t kinds() const noexcept { return kinds_; }
	const WatchStats &stats() const noexcept { return stats_; }

private:
	// Reads the guest into next_ (the caller holds the system's lock).
	Status read(LinuxSystem &guest);
	Status attest(LinuxSystem &guest, const Process &process, const WatchEvent &identity);
	Status scan_yara(LinuxSystem &guest, const Process &process, const WatchEvent &identity);
	// Reads, many frames per read (LinuxSystem::read_frames), the frames of the process's areas
	// that attestation (digests) and YARA (fingerprints) will look at, each at most once per poll.
	void prefetch_frames(LinuxSystem &guest, const Process &process);
	void prefetch_range(LinuxSystem &guest, const Process &process, uint64_t start, uint64_t pages, uint8_t need);
	void read_pending(LinuxSystem &guest);
	// attest_files_ = for each of areas_, its file in the hash map when attestation checks it.
	void select_attested();
	// frames_ = the frames of `pages` pages from page_va; false when the reader cannot tell.
	bool frames_for(LinuxSystem &guest, const Process &process, uint64_t page_va, uint64_t pages);
	// The page's fingerprint through this poll's frame table (frame: its frame when known is true):
	// false when it is not present.
	bool frame_fingerprint(LinuxSystem &guest, const Process &process, uint64_t page_va, bool known, uint64_t frame,
			       Fingerprint &out);
	// An area's fingerprint from the frames (without reading a frame twice in one poll).
	Fingerprint area_fingerprint(LinuxSystem &guest, const Process &process, uint64_t start, uint64_t end);
	// Reads an area's present pages into area_bytes_ / area_slots_ and fingerprints them; false when
	// the area has more than kMaxBufferedArea bytes present (it is then scanned from the guest).
	bool buffer_area(LinuxSystem &guest, const Process &process, uint64_t start, uint64_t end, Fingerprint &out);
	// The same through read_user, run by run (readers that give no frames).
	bool buffer_area_by_runs(LinuxSystem &guest, const Process &process, uint64_t start, uint64_t end,
				 Fingerprint &out);

	std::shared_ptr<System> system_;
	uint32_t kinds_;
	std::optional<ExecHashMap> hash_map_;
	std::shared_ptr<YaraRules> yara_rules_;
	RuleFilter yara_filter_;
	std::unique_ptr<WindowScanner> yara_scanner_; // kept from process to process and poll to poll
	bool yara_all_areas_ = true;
	bool have_state_ = false;
	WatchState state_;
	WatchState next_;
	WatchStats stats_;
	FingerprintKey key_ = FingerprintKey::random();
	// Per poll: the digest (attestation) and fingerprint (YARA) of each guest-physical frame read.
	FrameTable frame_table_;
	std::vector<uint64_t> pending_; // frames to read in the next batch
	std::vector<uint8_t> batch_bytes_;
	std::vector<uint8_t> batch_ok_;
	std::vector<const ExecHashFile *> attest_files_;
	// Per poll: areas already fingerprinted (YARA), attested, or prefetched, by their frames.
	FrameListMemo yara_memo_, attest_memo_, prefetch_memo_;
	std::vector<Fingerprint> yara_memo_results_;
	struct AttestCounts {
		uint32_t hashed = 0, present = 0, matching = 0;
	};
	std::vector<AttestCounts> attest_memo_results_;
	// Digests by frame across polls: a frame whose bytes did not change is not hashed again.
	PageDigestCache page_digests_;
	// YARA matches by area contents (fingerprint and number of pages), relative to the area's start:
	// those of this poll's areas (next) and of the last poll's (last).
	struct RelativeHit {
		std::string rule;
		uint64_t offset = 0;
		uint64_t length = 0;
	};
	struct ContentKey {
		Fingerprint fingerprint;
		uint64_t pages = 0;
		bool operator==(const ContentKey &) const = default;
	};
	struct ContentKeyHash {
		size_t operator()(const ContentKey &key) const noexcept
		{
			return static_cast<size_t>(key.fingerprint.lo ^ (key.pages * 0x9e3779b97f4a7c15u));
		}
	};
	using YaraCache = std::unordered_map<ContentKey, std::vector<RelativeHit>, ContentKeyHash>;
	YaraCache yara_last_;
	YaraCache yara_next_;
	std::vector<uint64_t> frames_;
	std::vector<uint8_t> area_bytes_;
	std::vector<uint64_t> area_frames_; // buffer_area: the present frames of a chunk
	std::vector<uint8_t> area_ok_;
	std::vector<uint32_t> area_slots_; // per page of the area: its offset in area_bytes_ / 4096, or kAbsent
	// Buffers reused from poll to poll.
	std::vector<Process> processes_;
	std::vector<Module> modules_;
	std::vector<Connection> connections_;
	std::vector<Injection> injections_;
	std::vector<MemoryArea> areas_;
};

} // namespace softdpu::apsh::api
