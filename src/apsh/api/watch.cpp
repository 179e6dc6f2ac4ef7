// The continuous watch (watch.hpp).
#include "apsh/api/watch.hpp"

#include "apsh/api/objects.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <sys/random.h>

#include <array>
#include <bit>
#include <chrono>
#include <cstring>
#include <ctime>
#include <mutex>

namespace softdpu::apsh::api {

namespace {

constexpr int kTcpListen = 10;
constexpr int kTcpClose = 7;
// Most YARA matches one process contributes to a poll.
constexpr size_t kMaxYaraMatchesPerProcess = 4096;

uint64_t realtime_ns()
{
	timespec now{};
	::clock_gettime(CLOCK_REALTIME, &now);
	return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

// Appends, with the given type, what is in `from` and not in `other`.
template <typename Map>
void added(const Map &from, const Map &other, softdpu_apsh_watch_event_type type, uint64_t timestamp_ns,
	   std::vector<WatchEvent> &events)
{
	for (const auto &[key, event] : from) {
		if (other.count(key) != 0)
			continue;
		events.push_back(event);
		events.back().type = type;
		events.back().timestamp_ns = timestamp_ns;
	}
}

// The process part of a finding's event.
WatchEvent finding_event(const WatchEvent &process, softdpu_apsh_watch_event_type type)
{
	WatchEvent event;
	event.type = type;
	event.pid = process.pid;
	event.ppid = process.ppid;
	event.start_time_ns = process.start_time_ns;
	event.comm = process.comm;
	event.kernel_thread = process.kernel_thread;
	return event;
}

// Not-found (the process exited meanwhile) and bad-state (no user memory) end one process's reads
// without failing the poll.
bool process_gone(const Status &status)
{
	return status.code == DOCA_ERROR_NOT_FOUND || status.code == DOCA_ERROR_BAD_STATE;
}

constexpr uint64_t kP1 = 0x9e3779b185ebca87u;
constexpr uint64_t kP2 = 0xc2b2ae3d27d4eb4fu;
constexpr uint64_t kP3 = 0x165667b19e3779f9u;
constexpr uint32_t kAbsentSlot = ~uint32_t{0};
// Areas with more bytes present than this are scanned from the guest every poll, not buffered.
constexpr uint64_t kMaxBufferedPages = 8192; // 32 MiB
// Pages translated per user_page_frames call.
constexpr uint64_t kFrameChunk = 4096;
// Areas of at least this many pages are looked up by their frames (FrameListMemo) before their pages.
constexpr uint64_t kMinMemoPages = 16;

uint64_t fmix(uint64_t x) noexcept
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdu;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53u;
	x ^= x >> 33;
	return x;
}

uint64_t lane_round(uint64_t acc, uint64_t word) noexcept
{
	return std::rotl(acc + word * kP2, 31) * kP1;
}

} // namespace

FingerprintKey FingerprintKey::random()
{
	FingerprintKey key;
	uint64_t words[4] = {};
	if (::getrandom(words, sizeof(words), 0) != static_cast<ssize_t>(sizeof(words))) {
		// No entropy source: the clock and the key's address (still not known to the guest).
		const auto now = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
		words[0] = fmix(now);
		words[1] = fmix(now ^ reinterpret_cast<uintptr_t>(&key));
		words[2] = fmix(words[0] + kP3);
		words[3] = fmix(words[1] + kP1);
	}
	key.k0 = words[0];
	key.k1 = words[1];
	key.k2 = words[2];
	key.k3 = words[3];
	return key;
}

Fingerprint page_fingerprint(std::span<const uint8_t, kPageSize> page, const FingerprintKey &key) noexcept
{
	uint64_t v0 = key.k0, v1 = key.k1, v2 = key.k2, v3 = key.k3;
	for (size_t i = 0; i < kPageSize; i += 32) {
		uint64_t w[4];
		std::memcpy(w, page.data() + i, sizeof(w));
		v0 = lane_round(v0, w[0]);
		v1 = lane_round(v1, w[1]);
		v2 = lane_round(v2, w[2]);
		v3 = lane_round(v3, w[3]);
	}
	const uint64_t lo = fmix(std::rotl(v0, 1) + std::rotl(v1, 7) + std::rotl(v2, 12) + std::rotl(v3, 18));
	const uint64_t hi = fmix((v0 ^ std::rotl(v1, 13)) + (std::rotl(v2, 29) ^ std::rotl(v3, 43)) + key.k0);
	return {lo, hi};
}

AreaFingerprint::AreaFingerprint(const FingerprintKey &key) noexcept : s0_(key.k2), s1_(key.k3) {}

void AreaFingerprint::mix(uint64_t a, uint64_t b) noexcept
{
	s0_ = fmix((s0_ ^ a) * kP1 + b);
	s1_ = fmix((s1_ + b) * kP2 ^ std::rotl(a, 17));
}

void AreaFingerprint::add_present(const Fingerprint &page) noexcept
{
	mix(page.lo, page.hi);
	++pages_;
}

void AreaFingerprint::add_absent() noexcept
{
	// A page fingerprint is a finalised value; this pair is not one a page gives but by chance.
	mix(0, 0);
	++pages_;
}

Fingerprint AreaFingerprint::value() const noexcept
{
	return {fmix(s0_ ^ pages_), fmix(s1_ + pages_ * kP3)};
}

void FrameTable::clear() noexcept
{
	size_ = 0;
	if (++generation_ == 0) { // after 2^32 polls: forget the old generations for real
		for (Entry &entry : entries_)
			entry.generation = 0;
		generation_ = 1;
	}
}

size_t FrameTable::home(uint64_t frame) const noexcept
{
	return static_cast<size_t>(fmix(frame >> 12)) & (entries_.size() - 1);
}

FrameTable::Entry *FrameTable::find(uint64_t frame) noexcept
{
	if (entries_.empty())
		return nullptr;
	for (size_t i = home(frame);; i = (i + 1) & (entries_.size() - 1)) {
		Entry &entry = entries_[i];
		if (entry.generation != generation_)
			return nullptr;
		if (entry.frame == frame)
			return &entry;
	}
}

FrameTable::Entry &FrameTable::at(uint64_t frame)
{
	if ((size_ + 1) * 2 > entries_.size())
		grow();
	for (size_t i = home(frame);; i = (i + 1) & (entries_.size() - 1)) {
		Entry &entry = entries_[i];
		if (entry.generation != generation_) {
			entry = Entry{};
			entry.frame = frame;
			entry.generation = generation_;
			++size_;
			return entry;
		}
		if (entry.frame == frame)
			return entry;
	}
}

void FrameTable::grow()
{
	std::vector<Entry> old = std::move(entries_);
	entries_.assign(std::max<size_t>(old.size() * 2, 1024), Entry{});
	size_ = 0;
	for (const Entry &entry : old)
		if (entry.generation == generation_)
			at(entry.frame) = entry;
}

namespace {

// A bucket for a list of frames (not a fingerprint: entries are compared whole).
uint64_t list_hash(uint64_t tag_a, uint64_t tag_b, const uint64_t *frames, size_t count) noexcept
{
	uint64_t a = tag_a ^ kP1, b = tag_b ^ kP2;
	size_t i = 0;
	for (; i + 2 <= count; i += 2) { // two independent lanes
		a = std::rotl(a ^ frames[i], 23) * kP1;
		b = std::rotl(b ^ frames[i + 1], 29) * kP2;
	}
	if (i < count)
		a = std::rotl(a ^ frames[i], 23) * kP1;
	return fmix(a ^ std::rotl(b, 32) ^ count);
}

} // namespace

void FrameListMemo::clear()
{
	entries_.clear();
	frames_.clear();
	std::fill(buckets_.begin(), buckets_.end(), ~uint32_t{0});
}

size_t FrameListMemo::find_or_add(uint64_t tag_a, uint64_t tag_b, std::span<const uint64_t> frames, bool &added)
{
	const uint64_t hash = list_hash(tag_a, tag_b, frames.data(), frames.size());
	if (buckets_.empty())
		buckets_.assign(4096, ~uint32_t{0});
	uint32_t *bucket = &buckets_[static_cast<size_t>(hash) & (buckets_.size() - 1)];
	for (uint32_t i = *bucket; i != ~uint32_t{0}; i = entries_[i].next) {
		const Entry &entry = entries_[i];
		if (entry.tag_a == tag_a && entry.tag_b == tag_b && entry.count == frames.size() &&
		    std::equal(frames.begin(), frames.end(),
			       frames_.begin() + static_cast<ptrdiff_t>(entry.frames_at))) {
			added = false;
			return i;
		}
	}
	added = true;
	Entry entry;
	entry.tag_a = tag_a;
	entry.tag_b = tag_b;
	entry.frames_at = frames_.size();
	entry.count = frames.size();
	entry.next = *bucket;
	frames_.insert(frames_.end(), frames.begin(), frames.end());
	*bucket = static_cast<uint32_t>(entries_.size());
	entries_.push_back(entry);
	if (entries_.size() > buckets_.size()) { // rehash at one entry per bucket
		buckets_.assign(buckets_.size() * 2, ~uint32_t{0});
		for (size_t i = 0; i < entries_.size(); ++i) {
			Entry &moved = entries_[i];
			const uint64_t rehash =
			    list_hash(moved.tag_a, moved.tag_b, frames_.data() + moved.frames_at, moved.count);
			uint32_t &head = buckets_[static_cast<size_t>(rehash) & (buckets_.size() - 1)];
			moved.next = head;
			head = static_cast<uint32_t>(i);
		}
	}
	return entries_.size() - 1;
}

void WatchState::clear()
{
	processes.clear();
	modules.clear();
	sockets.clear();
	attestation_failures.clear();
	yara_matches.clear();
	injections.clear();
}

void diff_states(const WatchState &before, const WatchState &after, uint32_t kinds, uint64_t timestamp_ns,
		 std::vector<WatchEvent> &events)
{
	const bool processes = (kinds & SOFTDPU_APSH_WATCH_KIND_PROCESSES) != 0;
	const bool modules = (kinds & SOFTDPU_APSH_WATCH_KIND_MODULES) != 0;
	const bool sockets = (kinds & SOFTDPU_APSH_WATCH_KIND_SOCKETS) != 0;
	if (processes)
		added(after.processes, before.processes, SOFTDPU_APSH_WATCH_PROCESS_STARTED, timestamp_ns, events);
	if (modules)
		added(after.modules, before.modules, SOFTDPU_APSH_WATCH_MODULE_LOADED, timestamp_ns, events);
	if (sockets)
		added(after.sockets, before.sockets, SOFTDPU_APSH_WATCH_SOCKET_LISTENING, timestamp_ns, events);
	if (kinds & SOFTDPU_APSH_WATCH_KIND_ATTESTATION)
		added(after.attestation_failures, before.attestation_failures, SOFTDPU_APSH_WATCH_ATTESTATION_FAILURE,
		      timestamp_ns, events);
	if (kinds & SOFTDPU_APSH_WATCH_KIND_YARA)
		added(after.yara_matches, before.yara_matches, SOFTDPU_APSH_WATCH_YARA_MATCH, timestamp_ns, events);
	if (kinds & SOFTDPU_APSH_WATCH_KIND_INJECTIONS)
		added(after.injections, before.injections, SOFTDPU_APSH_WATCH_INJECTION, timestamp_ns, events);
	if (processes)
		added(before.processes, after.processes, SOFTDPU_APSH_WATCH_PROCESS_EXITED, timestamp_ns, events);
	if (modules)
		added(before.modules, after.modules, SOFTDPU_APSH_WATCH_MODULE_UNLOADED, timestamp_ns, events);
	if (sockets)
		added(before.sockets, after.sockets, SOFTDPU_APSH_WATCH_SOCKET_CLOSED, timestamp_ns, events);
}

ProcessKey process_key(const Process &process)
{
	return {process.pid, process.start_time_ns, process.task};
}

WatchEvent process_event(const Process &process)
{
	WatchEvent event;
	event.pid = process.pid;
	event.ppid = process.ppid;
	event.start_time_ns = process.start_time_ns;
	event.comm = process.comm;
	event.kernel_thread = process.is_kernel_thread;
	return event;
}

WatchEvent module_event(const Module &module)
{
	WatchEvent event;
	event.type = SOFTDPU_APSH_WATCH_MODULE_LOADED;
	event.name = module.name;
	event.address = module.address;
	event.size = module.size;
	return event;
}

bool is_listening(const Connection &connection)
{
	if (connection.protocol == IPPROTO_TCP)
		return connection.state == kTcpListen;
	return connection.protocol == IPPROTO_UDP && connection.state == kTcpClose && connection.remote_port == 0;
}

SocketKey socket_key(const Connection &connection)
{
	return {connection.net_ns, connection.protocol, connection.family, connection.local_addr,
		connection.local_port};
}

WatchEvent socket_event(const Connection &connection)
{
	WatchEvent event;
	event.type = SOFTDPU_APSH_WATCH_SOCKET_LISTENING;
	event.pid = connection.pid;
	event.comm = connection.comm;
	event.protocol = connection.protocol == IPPROTO_TCP ? "tcp" : "udp";
	event.ip_version = connection.family == AF_INET6 ? 6 : 4;
	event.local_addr = connection.local_addr;
	event.local_port = connection.local_port;
	event.net_ns = connection.net_ns;
	return event;
}

Status Watch::set_hash_map(const std::string &path)
{
	ExecHashMap map;
	if (Status status = load_exec_hash_map(path, map); !status.ok())
		return status;
	hash_map_ = std::move(map);
	return Status::success();
}

void Watch::set_yara(std::shared_ptr<YaraRules> rules, RuleFilter filter, uint64_t scan_type)
{
	yara_rules_ = std::move(rules);
	yara_filter_ = std::move(filter);
	yara_scanner_.reset();
	yara_all_areas_ = (scan_type & DOCA_APSH_YARA_SCAN_VMA) != 0;
}

Status Watch::ready() const
{
	if ((kinds_ & SOFTDPU_APSH_WATCH_KIND_ATTESTATION) && !hash_map_)
		return {DOCA_ERROR_BAD_STATE, "attestation is watched but no hash map was set"};
	if ((kinds_ & SOFTDPU_APSH_WATCH_KIND_YARA) && !yara_rules_)
		return {DOCA_ERROR_BAD_STATE, "YARA is watched but no rules were set"};
	return Status::success();
}

Status Watch::poll(std::vector<WatchEvent> &events)
{
	if (Status status = ready(); !status.ok())
		return status;
	std::lock_guard lock(system_->mutex());
	next_.clear();
	frame_table_.clear();
	yara_memo_.clear();
	attest_memo_.clear();
	prefetch_memo_.clear();
	yara_memo_results_.clear();
	attest_memo_results_.clear();
	// One look at the guest: its queries share the pages they read (LinuxSystem::begin_batch), until
	// the poll ends however it ends (an exception included: later queries must read afresh).
	struct Batch {
		LinuxSystem &guest;
		explicit Batch(LinuxSystem &g) : guest(g) { guest.begin_batch(); }
		~Batch() { guest.end_batch(); }
		Batch(const Batch &) = delete;
		Batch &operator=(const Batch &) = delete;
	};
	Status status;
	{
		Batch batch(system_->guest());
		status = read(system_->guest());
	}
	if (!status.ok()) {
		// Keep what the last good poll scanned, and what this one did.
		yara_last_.merge(yara_next_);
		yara_next_.clear();
		return status;
	}
	yara_last_.clear();
	std::swap(yara_last_, yara_next_);
	if (have_state_)
		diff_states(state_, next_, kinds_, realtime_ns(), events);
	std::swap(state_, next_);
	have_state_ = true;
	return Status::success();
}

Status Watch::read(LinuxSystem &guest)
{
	constexpr uint32_t per_process =
	    SOFTDPU_APSH_WATCH_KIND_ATTESTATION | SOFTDPU_APSH_WATCH_KIND_YARA | SOFTDPU_APSH_WATCH_KIND_INJECTIONS;
	const Limits &limits = system_->settings().limits;
	if (kinds_ & (SOFTDPU_APSH_WATCH_KIND_PROCESSES | per_process)) {
		processes_.clear();
		if (Status status = guest.processes(processes_); !status.ok())
			return status;
		if (processes_.size() > limits.processes)
			processes_.resize(limits.processes);
		for (const Process &process : processes_)
			next_.processes.emplace(process_key(process), process_event(process));
	}
	if (kinds_ & SOFTDPU_APSH_WATCH_KIND_MODULES) {
		modules_.clear();
		if (Status status = guest.modules(modules_); !status.ok())
			return status;
		for (const Module &module : modules_)
			next_.modules.emplace(ModuleKey{module.name, module.address}, module_event(module));
	}
	if (kinds_ & SOFTDPU_APSH_WATCH_KIND_SOCKETS) {
		connections_.clear();
		if (Status status = guest.connections(connections_); !status.ok())
			return status;
		for (const Connection &connection : connections_)
			if (is_listening(connection))
				next_.sockets.emplace(socket_key(connection), socket_event(connection));
	}
	if (kinds_ & per_process) {
		for (const Process &process : processes_) {
			if (process.is_kernel_thread)
				continue;
			const WatchEvent identity = process_event(process);
			const bool need_areas =
			    (kinds_ & (SOFTDPU_APSH_WATCH_KIND_ATTESTATION | SOFTDPU_APSH_WATCH_KIND_YARA)) != 0;
			if (need_areas) {
				areas_.clear();
				Status status = guest.memory_areas(process, areas_);
				if (process_gone(status))
					continue;
				if (!status.ok())
					return status;
			}
			if (kinds_ & SOFTDPU_APSH_WATCH_KIND_INJECTIONS) {
				injections_.clear();
				if (need_areas) {
					// The same walk as guest.injections (which would read the areas again).
					for (const MemoryArea &area : areas_)
						if (is_injection_area(area))
							injections_.push_back(
							    {process.pid, area, area.start, area.end});
				} else {
					Status status = guest.injections(process, injections_);
					if (process_gone(status))
						continue;
					if (!status.ok())
						return status;
				}
				for (const Injection &injection : injections_) {
					WatchEvent event = finding_event(identity, SOFTDPU_APSH_WATCH_INJECTION);
					event.address = injection.suspected_start;
					event.size = injection.suspected_end - injection.suspected_start;
					event.path = injection.area.file_path;
					event.protection = protection_string(injection.area.protection);
					next_.injections.emplace(FindingKey{process_key(process), event.address, {}},
								 std::move(event));
				}
			}
			if (need_areas)
				prefetch_frames(guest, process);
			if (kinds_ & SOFTDPU_APSH_WATCH_KIND_ATTESTATION)
				if (Status status = attest(guest, process, identity); !status.ok())
					return status;
			if (kinds_ & SOFTDPU_APSH_WATCH_KIND_YARA)
				if (Status status = scan_yara(guest, process, identity); !status.ok())
					return status;
		}
	}
	// A memory image that shrank (or failed to read) reads as absent pages: an error, not a result.
	return guest.source_failure();
}

void Watch::select_attested()
{
	attest_files_.assign(areas_.size(), nullptr);
	for_each_attested_area(areas_, system_->settings().hashtest_limit, [&](size_t k) {
		if (!areas_[k].file_path.empty())
			attest_files_[k] = hash_map_->find(areas_[k].file_path);
	});
}

namespace {

// The range of pages YARA reads for an area (scan_yara's rounding); false when empty.
bool yara_range(const MemoryArea &area, uint64_t &start, uint64_t &end)
{
	start = area.start & ~(kPageSize - 1);
	end = (area.end & (kPageSize - 1)) == 0 ? area.end
	      : area.end > ~(kPageSize - 1)     ? area.end & ~(kPageSize - 1)
						: (area.end | (kPageSize - 1)) + 1;
	return end > start;
}

} // namespace

void Watch::prefetch_frames(LinuxSystem &guest, const Process &process)
{
	const bool attest = (kinds_ & SOFTDPU_APSH_WATCH_KIND_ATTESTATION) != 0;
	const bool yara = (kinds_ & SOFTDPU_APSH_WATCH_KIND_YARA) != 0;
	if (attest)
		select_attested();
	pending_.clear();
	for (size_t k = 0; k < areas_.size(); ++k) {
		const MemoryArea &area = areas_[k];
		const bool digests = attest && attest_files_[k] != nullptr;
		uint64_t start = 0, end = 0;
		const bool fingerprints =
		    yara && (yara_all_areas_ || area.file_path == "[heap]") && yara_range(area, start, end);
		const uint64_t attest_pages = digests ? (area.end - area.start + kPageSize - 1) / kPageSize : 0;
		if (digests && fingerprints && start == area.start && (end - start) / kPageSize == attest_pages) {
			prefetch_range(guest, process, start, attest_pages,
				       FrameTable::kDigest | FrameTable::kFingerprint);
			continue;
		}
		if (digests)
			prefetch_range(guest, process, area.start, attest_pages, FrameTable::kDigest);
		if (fingerprints)
			prefetch_range(guest, process, start, (end - start) / kPageSize, FrameTable::kFingerprint);
	}
	read_pending(guest);
}

void Watch::prefetch_range(LinuxSystem &guest, const Process &process, uint64_t start, uint64_t pages, uint8_t need)
{
	constexpr size_t kBatch = 512; // frames per read_frames (2 MiB)
	for (uint64_t i = 0; i < pages; i += kFrameChunk) {
		const uint64_t count = std::min(pages - i, kFrameChunk);
		if (!frames_for(guest, process, start + i * kPageSize, count))
			return; // the reader gives no frames: attest and scan_yara read page by page
		if (count == pages && pages >= kMinMemoPages) {
			// The same frames asked for before in this poll (a library in another process): queued.
			bool added = false;
			prefetch_memo_.find_or_add(need, 0, std::span<const uint64_t>(frames_.data(), count), added);
			if (!added)
				return;
		}
		for (uint64_t j = 0; j < count; ++j) {
			const uint64_t frame = frames_[j];
			if (frame == LinuxSystem::kNoPhysicalAddress)
				continue;
			FrameTable::Entry &entry = frame_table_.at(frame);
			const uint8_t missing = need & ~entry.have & ~entry.pending;
			if (missing == 0)
				continue;
			entry.pending |= missing;
			pending_.push_back(frame);
			if (pending_.size() >= kBatch)
				read_pending(guest);
		}
	}
}

void Watch::read_pending(LinuxSystem &guest)
{
	if (pending_.empty())
		return;
	batch_bytes_.resize(pending_.size() * kPageSize);
	batch_ok_.assign(pending_.size(), 0);
	guest.read_frames(pending_, batch_bytes_, batch_ok_);
	for (size_t i = 0; i < pending_.size(); ++i) {
		FrameTable::Entry *entry = frame_table_.find(pending_[i]);
		if (entry == nullptr || entry->pending == 0)
			continue; // a frame listed twice (asked for by both kinds): done at its first place
		const uint8_t need = entry->pending;
		entry->pending = 0;
		if (!batch_ok_[i])
			continue; // attest and scan_yara try it again on their own, and count it absent
		++stats_.frames_read;
		const std::span<const uint8_t, kPageSize> page(batch_bytes_.data() + i * kPageSize, kPageSize);
		if (need & FrameTable::kFingerprint)
			entry->fingerprint = page_fingerprint(page, key_);
		if (need & FrameTable::kDigest)
			entry->digest = page_digests_.hash(pending_[i], page);
		entry->have |= need;
	}
	pending_.clear();
}

Status Watch::attest(LinuxSystem &guest, const Process &process, const WatchEvent &identity)
{
	std::array<uint8_t, kPageSize> page;
	for (size_t k = 0; k < areas_.size(); ++k) {
		const MemoryArea &area = areas_[k];
		const ExecHashFile *file = attest_files_[k];
		if (file == nullptr)
			continue;
		uint32_t hashed = 0, present = 0, matching = 0;
		const uint64_t pages = (area.end - area.start + kPageSize - 1) / kPageSize;
		bool known = false;
		// An area with the frames of one attested before in this poll (a library's text in another
		// process), against the same file at the same offset, has that area's counts.
		size_t memo = 0;
		bool memo_new = false;
		const bool memo_eligible = pages >= kMinMemoPages && pages <= kFrameChunk;
		if (memo_eligible) {
			known = frames_for(guest, process, area.start, pages);
			if (known) {
				memo = attest_memo_.find_or_add(reinterpret_cast<uintptr_t>(file), area.offset,
								std::span<const uint64_t>(frames_.data(), pages),
								memo_new);
				if (!memo_new) {
					const AttestCounts &counts = attest_memo_results_[memo];
					hashed = counts.hashed;
					present = counts.present;
					matching = counts.matching;
					stats_.frames_reused += present;
				}
			}
		}
		for (uint64_t i = 0; i < pages && !(known && memo_eligible && !memo_new); ++i) {
			const uint64_t va = area.start + i * kPageSize;
			if (i % kFrameChunk == 0 && !(i == 0 && memo_eligible))
				known = frames_for(guest, process, va, std::min(pages - i, kFrameChunk));
			auto expected = file->pages.find(area.offset + i * kPageSize);
			if (expected != file->pages.end())
				++hashed;
			// A frame shared by many processes (a library's text) is read and hashed once per poll,
			// and hashed again only when its bytes changed since the last (page_digests_).
			const uint64_t frame = frames_[i % kFrameChunk];
			if (known && frame == LinuxSystem::kNoPhysicalAddress)
				continue; // not present
			Sha256Digest digest;
			FrameTable::Entry *seen = known ? frame_table_.find(frame) : nullptr;
			if (seen != nullptr && (seen->have & FrameTable::kDigest)) {
				// Read by prefetch_frames (counted there) or by an earlier page.
				if (seen->used & FrameTable::kDigest)
					++stats_.frames_reused;
				seen->used |= FrameTable::kDigest;
				digest = seen->digest;
			} else {
				uint64_t physical = frame;
				if (known ? !guest.read_frame(frame, page)
					  : !guest.read_user_page_physical(process, va, page, physical))
					continue;
				++stats_.frames_read;
				if (physical == LinuxSystem::kNoPhysicalAddress) {
					digest = hash_page(page);
				} else {
					digest = page_digests_.hash(physical, page);
					FrameTable::Entry &entry = frame_table_.at(physical);
					entry.digest = digest;
					entry.have |= FrameTable::kDigest;
					entry.used |= FrameTable::kDigest;
				}
			}
			++present;
			if (expected != file->pages.end() && digest == expected->second)
				++matching;
		}
		if (memo_new) {
			attest_memo_results_.resize(attest_memo_.size());
			attest_memo_results_[memo] = {hashed, present, matching};
		}
		// doca_apsh_attestation_get's verdict, from the same counts (attestation.hpp).
		const AreaAttestation result{&area, file, hashed, present, matching};
		if (!result.modified())
			continue;
		WatchEvent event = finding_event(identity, SOFTDPU_APSH_WATCH_ATTESTATION_FAILURE);
		event.address = area.start;
		event.size = area.end - area.start;
		event.path = area.file_path;
		event.protection = protection_string(area.protection);
		event.pages_present = present;
		event.matching_pages = matching;
		next_.attestation_failures.emplace(FindingKey{process_key(process), area.start, {}}, std::move(event));
	}
	return Status::success();
}

bool Watch::frames_for(LinuxSystem &guest, const Process &process, uint64_t page_va, uint64_t pages)
{
	frames_.resize(pages);
	return guest.user_page_frames(process, page_va, frames_);
}

bool Watch::frame_fingerprint(LinuxSystem &guest, const Process &process, uint64_t page_va, bool known, uint64_t frame,
			      Fingerprint &out)
{
	if (known) {
		if (frame == LinuxSystem::kNoPhysicalAddress)
			return false;
		if (FrameTable::Entry *seen = frame_table_.find(frame);
		    seen != nullptr && (seen->have & FrameTable::kFingerprint)) {
			// Read by prefetch_frames (counted there) or for an earlier page.
			if (seen->used & FrameTable::kFingerprint)
				++stats_.frames_reused;
			seen->used |= FrameTable::kFingerprint;
			out = seen->fingerprint;
			return true;
		}
	}
	std::array<uint8_t, kPageSize> page;
	uint64_t physical = frame;
	if (known ? !guest.read_frame(frame, page) : !guest.read_user_page_physical(process, page_va, page, physical))
		return false;
	++stats_.frames_read;
	out = page_fingerprint(page, key_);
	if (physical != LinuxSystem::kNoPhysicalAddress) {
		FrameTable::Entry &entry = frame_table_.at(physical);
		entry.fingerprint = out;
		entry.have |= FrameTable::kFingerprint;
		entry.used |= FrameTable::kFingerprint;
	}
	return true;
}

Fingerprint Watch::area_fingerprint(LinuxSystem &guest, const Process &process, uint64_t start, uint64_t end)
{
	AreaFingerprint area(key_);
	const uint64_t pages = (end - start) / kPageSize;
	bool known = false;
	// An area with the frames of one fingerprinted before in this poll has its fingerprint.
	size_t memo = 0;
	bool memo_new = false;
	const bool memo_eligible = pages >= kMinMemoPages && pages <= kFrameChunk;
	if (memo_eligible) {
		known = frames_for(guest, process, start, pages);
		if (known) {
			memo = yara_memo_.find_or_add(0, 0, std::span<const uint64_t>(frames_.data(), pages), memo_new);
			if (!memo_new) {
				stats_.frames_reused += static_cast<uint64_t>(std::count_if(
				    frames_.begin(), frames_.begin() + static_cast<ptrdiff_t>(pages),
				    [](uint64_t frame) { return frame != LinuxSystem::kNoPhysicalAddress; }));
				return yara_memo_results_[memo];
			}
		}
	}
	for (uint64_t i = 0; i < pages; ++i) {
		if (i % kFrameChunk == 0 && !(i == 0 && memo_eligible))
			known = frames_for(guest, process, start + i * kPageSize, std::min(pages - i, kFrameChunk));
		Fingerprint page;
		if (frame_fingerprint(guest, process, start + i * kPageSize, known, frames_[i % kFrameChunk], page))
			area.add_present(page);
		else
			area.add_absent();
	}
	if (memo_new) {
		yara_memo_results_.resize(yara_memo_.size());
		yara_memo_results_[memo] = area.value();
	}
	return area.value();
}

bool Watch::buffer_area(LinuxSystem &guest, const Process &process, uint64_t start, uint64_t end, Fingerprint &out)
{
	const uint64_t pages = (end - start) / kPageSize;
	area_slots_.assign(pages, kAbsentSlot);
	AreaFingerprint area(key_);
	uint64_t used = 0; // pages in area_bytes_
	// Where the reader gives frames: the present ones read many per read (read_frames).
	for (uint64_t i = 0; i < pages; i += kFrameChunk) {
		const uint64_t count = std::min(pages - i, kFrameChunk);
		if (!frames_for(guest, process, start + i * kPageSize, count)) {
			if (i != 0)
				return false; // cannot happen (a reader gives frames or not); scanned from the guest
			return buffer_area_by_runs(guest, process, start, end, out);
		}
		area_frames_.clear();
		for (uint64_t j = 0; j < count; ++j)
			if (frames_[j] != LinuxSystem::kNoPhysicalAddress)
				area_frames_.push_back(frames_[j]);
		if (used + area_frames_.size() > kMaxBufferedPages)
			return false;
		if (area_bytes_.size() < (used + area_frames_.size()) * kPageSize)
			area_bytes_.resize((used + area_frames_.size()) * kPageSize);
		area_ok_.assign(area_frames_.size(), 0);
		guest.read_frames(area_frames_,
				  {area_bytes_.data() + used * kPageSize, area_frames_.size() * kPageSize}, area_ok_);
		size_t next = 0; // in area_frames_
		for (uint64_t j = 0; j < count; ++j) {
			if (frames_[j] == LinuxSystem::kNoPhysicalAddress || !area_ok_[next++]) {
				area.add_absent();
				continue;
			}
			const uint8_t *bytes = area_bytes_.data() + (used + next - 1) * kPageSize;
			area_slots_[i + j] = static_cast<uint32_t>(used + next - 1);
			area.add_present(page_fingerprint(std::span<const uint8_t, kPageSize>(bytes, kPageSize), key_));
		}
		used += area_frames_.size(); // unread frames leave unused slots
	}
	out = area.value();
	return true;
}

bool Watch::buffer_area_by_runs(LinuxSystem &guest, const Process &process, uint64_t start, uint64_t end,
				Fingerprint &out)
{
	const uint64_t pages = (end - start) / kPageSize;
	area_slots_.assign(pages, kAbsentSlot);
	AreaFingerprint area(key_);
	uint64_t used = 0; // pages in area_bytes_
	for (uint64_t i = 0; i < pages;) {
		const uint64_t want = std::min(pages - i, kMaxBufferedPages - used);
		if (want == 0)
			return false;
		if (area_bytes_.size() < (used + want) * kPageSize)
			area_bytes_.resize((used + want) * kPageSize);
		const uint64_t got =
		    guest.read_user(process, start + i * kPageSize,
				    {area_bytes_.data() + used * kPageSize, static_cast<size_t>(want * kPageSize)}) /
		    kPageSize;
		for (uint64_t j = 0; j < got; ++j) {
			area_slots_[i + j] = static_cast<uint32_t>(used + j);
			area.add_present(page_fingerprint(
			    std::span<const uint8_t, kPageSize>(area_bytes_.data() + (used + j) * kPageSize, kPageSize),
			    key_));
		}
		used += got;
		i += got;
		if (got < want) { // the page at i is not present
			area.add_absent();
			++i;
		}
	}
	out = area.value();
	return true;
}

Status Watch::scan_yara(LinuxSystem &guest, const Process &process, const WatchEvent &identity)
{
	// One scanner for every process (creating a libyara scanner and its buffer per process cost more
	// than the scan of an unchanged guest).
	const WindowSettings window = system_->settings().window;
	if (!yara_scanner_ || yara_scanner_->window().size != window.size ||
	    yara_scanner_->window().step != window.step)
		yara_scanner_ =
		    std::make_unique<WindowScanner>(yara_rules_, yara_filter_, window, kMaxYaraMatchesPerProcess);
	WindowScanner &scanner = *yara_scanner_;
	if (Status status = scanner.ok(); !status.ok())
		return status;
	scanner.clear_hits();
	std::vector<YaraHit> &hits = scanner.hits();
	bool truncated = false;
	// As scan_process_areas, area by area; an area whose contents (fingerprinted frame by frame, each
	// frame read once per poll) were scanned before, in this poll or the last, has the same matches
	// at the same offsets from its start and is not scanned again.
	for (const MemoryArea &area : areas_) {
		if (!yara_all_areas_ && area.file_path != "[heap]")
			continue;
		uint64_t start = 0, end = 0;
		if (!yara_range(area, start, end))
			continue;
		const ContentKey key{area_fingerprint(guest, process, start, end), (end - start) / kPageSize};
		const std::vector<RelativeHit> *known = nullptr;
		if (auto it = yara_next_.find(key); it != yara_next_.end()) {
			known = &it->second;
		} else if (auto node = yara_last_.extract(key); !node.empty()) {
			known = &yara_next_.insert(std::move(node)).position->second;
		}
		if (known != nullptr) {
			++stats_.yara_areas_reused;
			for (const RelativeHit &hit : *known) {
				if (hits.size() >= kMaxYaraMatchesPerProcess) {
					truncated = true;
					break;
				}
				hits.push_back({hit.rule, start + hit.offset, hit.length});
			}
			if (truncated)
				break;
			continue;
		}
		++stats_.yara_areas_scanned;
		const size_t before = hits.size();
		Fingerprint read_as;
		Status status;
		if (buffer_area(guest, process, start, end, read_as)) {
			// Scanned from the bytes fingerprinted, so the matches kept are those of read_as.
			status = scanner.scan_area_runs(area.start, area.end, [&](uint64_t va, std::span<uint8_t> out) {
				size_t done = 0;
				for (uint64_t i = (va - start) / kPageSize;
				     done + kPageSize <= out.size() && i < area_slots_.size() &&
				     area_slots_[i] != kAbsentSlot;
				     ++i, done += kPageSize)
					std::memcpy(out.data() + done, area_bytes_.data() + area_slots_[i] * kPageSize,
						    kPageSize);
				return done;
			});
			if (status.ok() && !scanner.truncated()) {
				std::vector<RelativeHit> found;
				found.reserve(hits.size() - before);
				for (size_t i = before; i < hits.size(); ++i)
					found.push_back(
					    {hits[i].rule, hits[i].window_addr - start, hits[i].window_len});
				yara_next_.insert_or_assign(ContentKey{read_as, key.pages}, std::move(found));
			}
		} else {
			status = scanner.scan_area_runs(area.start, area.end, [&](uint64_t va, std::span<uint8_t> out) {
				return guest.read_user(process, va, out);
			});
		}
		if (!status.ok())
			return process_gone(status) ? Status::success() : status;
		if (scanner.truncated())
			break;
	}
	// Pages of a memory image that shrank meanwhile read as absent: that is an error, not a result.
	if (Status status = guest.source_failure(); !status.ok())
		return process_gone(status) ? Status::success() : status;
	for (YaraHit &hit : hits) {
		WatchEvent event = finding_event(identity, SOFTDPU_APSH_WATCH_YARA_MATCH);
		event.name = std::move(hit.rule);
		event.address = hit.window_addr;
		event.size = hit.window_len;
		FindingKey key{process_key(process), event.address, event.name};
		next_.yara_matches.emplace(std::move(key), std::move(event));
	}
	return Status::success();
}

} // namespace softdpu::apsh::api
