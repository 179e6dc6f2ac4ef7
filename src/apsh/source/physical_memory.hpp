// Guest-physical memory read from a file: a QEMU shared RAM file, a raw image, a QEMU ELF core
// or a LiME image. The file is read with pread, never mapped: the guest may keep running and
// writing it, a file that shrinks meanwhile gives a read error naming the file (a mapping would
// kill the process with SIGBUS), and a sparse file's holes read as zeros without being allocated
// (a read fault through a mapping allocates tmpfs pages). Only bytes inside the known RAM ranges
// can be read, everything else reads as "absent".
#pragma once

#include "apsh/introspection.hpp"
#include "common/unique_fd.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace softdpu::apsh::source {

// Where PhysicalMemory's bytes come from: offsets into an image file (ImageFile), or host virtual
// addresses of a running QEMU process (QemuProcessMemory, qemu_process.hpp). RamRange::file_offset
// is an offset of this space.
class ByteSource {
public:
	virtual ~ByteSource() = default;
	// Reads [offset, offset + out.size()). False, with why naming the source, when it no longer
	// holds all of it (the file shrank, the process exited) or the read fails.
	virtual bool read(uint64_t offset, std::span<uint8_t> out, std::string &why) const = 0;
	// One piece of a batched read: [offset, offset + out.size()) into out.
	struct Piece {
		uint64_t offset = 0;
		std::span<uint8_t> out;
	};
	// Reads the pieces in order, as read() on each would, but with as few calls to the kernel as the
	// source allows (a QEMU process: many pieces per process_vm_readv). Returns how many pieces, from
	// the first, were read whole; when that is fewer than all, why says why the next one failed (as
	// read() would) and the pieces after it are not read.
	virtual size_t read_pieces(std::span<const Piece> pieces, std::string &why) const;
	// The first offset in [offset, end) that may hold data (holes before it read as zeros), or end.
	virtual uint64_t next_data(uint64_t offset, uint64_t end) const { return offset < end ? offset : end; }
	// Where the data at offset ends (the next hole, or end).
	virtual uint64_t data_end(uint64_t /*offset*/, uint64_t end) const { return end; }
	// The end of the offsets that can be read (the file's size when it was opened).
	virtual uint64_t size() const = 0;
};

// A memory image opened for reading: a regular file, or a block device holding an image.
// Anything else (a FIFO, a character device, a directory) is refused before it is opened.
class ImageFile : public ByteSource {
public:
	Status open(const std::string &path);
	uint64_t size() const override { return size_; } // when it was opened
	const std::string &path() const { return path_; }

	bool read(uint64_t offset, std::span<uint8_t> out, std::string &why) const override;
	uint64_t next_data(uint64_t offset, uint64_t end) const override;
	uint64_t data_end(uint64_t offset, uint64_t end) const override;

private:
	uint64_t current_size() const;

	softdpu::common::UniqueFd fd_;
	uint64_t size_ = 0;
	bool block_device_ = false;
	std::string path_;
};

// CPU state that an image format records (the QEMU ELF core's "QEMU" note); only hints.
struct CpuHints {
	std::optional<uint64_t> cr3;
	std::optional<uint64_t> cr4;
};

// The layout a header parser derived: RAM ranges in file offsets, plus optional CPU hints.
struct ImageLayout {
	std::vector<RamRange> ranges;
	CpuHints cpu;
};

// Reads [offset, offset + out.size()) of an image file for the header parsers; false when the
// file does not hold all of it.
using ReadAt = std::function<bool(uint64_t offset, std::span<uint8_t> out)>;

// A part of guest RAM handed to a search (PhysicalMemory::scan). bytes[0] is at GPA gpa; the
// search looks for matches that start in bytes[begin, end); up to `lookbehind` bytes before
// begin (fewer only at the start of a RAM range) and `lookahead` bytes after end (fewer only at
// the end of a range) are there as context. Holes of the file are zeros.
struct ScanWindow {
	uint64_t gpa = 0;
	std::span<const uint8_t> bytes;
	size_t begin = 0;
	size_t end = 0;
};

struct ScanOptions {
	size_t lookbehind = 0;
	size_t lookahead = 0;
	size_t chunk_bytes = 1u << 20; // bytes a window is responsible for, at most
};

class PhysicalMemory {
public:
	// Opens the file and works out its RAM ranges (spec.ranges, QMP, the image header, or the
	// file size for raw/shared RAM). Fails with a reason when the file is not a usable image.
	// The process kinds (qemu_pid, qemu_name, libvirt_domain) open a running QEMU process instead
	// (qemu_process.hpp).
	static Status open(const SourceSpec &spec, std::unique_ptr<PhysicalMemory> &out);
	// Over bytes the caller keeps alive (tests, fuzzing): offset = file offset.
	static Status over_bytes(std::span<const uint8_t> bytes, std::vector<RamRange> ranges,
				 std::unique_ptr<PhysicalMemory> &out);

	// Copies [gpa, gpa+out.size()) when every byte is inside the ranges; false otherwise.
	bool read(uint64_t gpa, std::span<uint8_t> out) const;
	template <typename T> std::optional<T> read_value(uint64_t gpa) const
	{
		T value{};
		if (!read(gpa, {reinterpret_cast<uint8_t *>(&value), sizeof(T)}))
			return std::nullopt;
		return value;
	}
	// Reads whole pages: page i of out (4,096 bytes each, out.size() == 4096 * gpas.size()) from
	// gpas[i]; ok[i] is what read(gpas[i], page i) would return, a failure of the source recorded
	// in the same way (failure()). Pages inside one RAM range go to the source many at a time
	// (ByteSource::read_pieces: one process_vm_readv for up to 1,024 pages of a QEMU process).
	static constexpr size_t kPageBytes = 4096;
	void read_pages(std::span<const uint64_t> gpas, std::span<uint8_t> out, std::span<uint8_t> ok) const;
	// The first GPA at or after gpa, inside gpa's RAM range, that may hold data: the holes of a
	// sparse file before it hold zeros. The range's end when only holes follow; gpa itself when
	// gpa is outside every range or the source has no holes.
	uint64_t next_data(uint64_t gpa) const;

	// Searches all RAM: calls visit for consecutive windows (ScanWindow) over every range, in GPA
	// order, until visit returns false. Holes of a sparse file are skipped without being read
	// (they hold zeros: a search for anything else has nothing to find there), so the time is
	// linear in the bytes the file holds, not its size; memory is one buffer of chunk_bytes plus
	// the context. Fails (with failure()) when the file cannot be read.
	Status scan(const ScanOptions &options, const std::function<bool(const ScanWindow &)> &visit) const;

	// A query's reads (a walk: many small reads of page-table entries and fields) may keep the
	// pages they read for the rest of the query: small reads are then served from a cache of
	// recent 4 KiB pages instead of one pread each. Between begin_query() and end_query() only
	// (both flush it); outside, every read goes to the file. Reads of a page or more bypass it.
	void begin_query() const;
	void end_query() const;
	// Between hold_cache(true) and hold_cache(false) the cache is on and kept across queries (a
	// series of queries that one caller treats as one look at the guest: a watch's poll), so that
	// pages several queries read (a process's task and mm, the dentries of shared libraries) are
	// read once; bytes read through it are then as old as the hold, at most.
	void hold_cache(bool hold) const;

	// The first failure to read the source since it was opened or since clear_failure(): the file
	// shrank, or a read error. Such a read returns false, as a read of absent memory does; callers
	// that must tell the two apart (a walk that found a torn list) check this.
	Status failure() const;
	void clear_failure() const;

	const std::vector<RamRange> &ranges() const { return ranges_; }
	uint64_t total_bytes() const;
	const CpuHints &cpu_hints() const { return cpu_; }
	const char *kind_name() const { return kind_name_; }
	// The QEMU process read by a process source, 0 for files.
	uint32_t process_id() const { return process_id_; }

private:
	PhysicalMemory() = default;
	const RamRange *range_for(uint64_t gpa) const;
	// Copies file bytes (from the file, or from bytes_ for over_bytes); records a failure.
	bool read_source(uint64_t offset, std::span<uint8_t> out, std::string *why = nullptr) const;
	void record_failure(const std::string &why) const;

	std::unique_ptr<ByteSource> file_; // null for over_bytes
	std::span<const uint8_t> bytes_;   // over_bytes only
	std::vector<RamRange> ranges_;     // sorted by gpa_start, non-overlapping
	CpuHints cpu_;
	const char *kind_name_ = "raw";
	uint32_t process_id_ = 0;
	bool read_cached(uint64_t offset, std::span<uint8_t> out) const;

	// The query cache: file pages in 4-way sets (a walk's hot pages, such as a process's VMA slab
	// pages and page tables, rarely evict each other), allocated on first use.
	static constexpr size_t cache_ways = 4;
	static constexpr size_t cache_sets = 128;
	static constexpr size_t cache_pages = cache_ways * cache_sets;
	static constexpr size_t max_cached_read = 512;
	mutable std::mutex cache_mutex_;
	mutable bool cache_active_ = false;
	mutable bool cache_held_ = false;
	mutable std::vector<uint64_t> cache_tags_;  // file page index + 1; 0: empty
	mutable std::vector<uint64_t> cache_stamp_; // when each slot was last used (the oldest is replaced)
	mutable uint64_t cache_clock_ = 0;
	mutable std::vector<uint8_t> cache_bytes_;

	mutable std::atomic<bool> failed_{false};
	mutable std::mutex failure_mutex_;
	mutable std::string failure_;
};

// Header parsers: they read only the headers (through read), never the RAM. The span versions
// parse bytes in memory (tests, fuzzing) with the same code.
bool looks_like_elf_core(std::span<const uint8_t> file);
bool looks_like_lime(std::span<const uint8_t> file);
Status parse_elf_core(uint64_t file_size, const ReadAt &read, ImageLayout &out);
Status parse_lime(uint64_t file_size, const ReadAt &read, ImageLayout &out);
Status parse_elf_core(std::span<const uint8_t> file, ImageLayout &out);
Status parse_lime(std::span<const uint8_t> file, ImageLayout &out);
// Checks that ranges are sane, sorted and inside a file of file_size bytes; sorts them.
Status validate_ranges(std::vector<RamRange> &ranges, uint64_t file_size);

} // namespace softdpu::apsh::source
