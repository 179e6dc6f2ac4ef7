// Guest-physical memory read from a file: a QEMU shared RAM file, a raw image, a QEMU ELF core
// or a LiME image. The file is mapped read-only (the guest may keep running and writing it);
// only bytes inside the known RAM ranges can be read, everything else reads as "absent".
#pragma once

#include "apsh/introspection.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace softdpu::apsh::source {

// A read-only mapping of a whole file; unmapped when destroyed.
class MappedFile {
public:
	MappedFile() = default;
	MappedFile(const MappedFile &) = delete;
	MappedFile &operator=(const MappedFile &) = delete;
	~MappedFile();

	Status open(const std::string &path);
	std::span<const uint8_t> bytes() const { return {data_, size_}; }
	const std::string &path() const { return path_; }

private:
	const uint8_t *data_ = nullptr;
	size_t size_ = 0;
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

class PhysicalMemory {
public:
	// Maps the file and works out its RAM ranges (spec.ranges, QMP, the image header, or the
	// file size for raw/shared RAM). Fails with a reason when the file is not a usable image.
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
	// A direct view of [gpa, gpa+length) when it lies inside one range; empty otherwise.
	std::span<const uint8_t> view(uint64_t gpa, size_t length) const;

	const std::vector<RamRange> &ranges() const { return ranges_; }
	uint64_t total_bytes() const;
	const CpuHints &cpu_hints() const { return cpu_; }
	const char *kind_name() const { return kind_name_; }

private:
	PhysicalMemory() = default;
	const RamRange *range_for(uint64_t gpa) const;

	MappedFile file_;
	std::span<const uint8_t> bytes_;
	std::vector<RamRange> ranges_; // sorted by gpa_start, non-overlapping
	CpuHints cpu_;
	const char *kind_name_ = "raw";
};

// Header parsers, separate so that they can be fuzzed on plain bytes.
bool looks_like_elf_core(std::span<const uint8_t> file);
bool looks_like_lime(std::span<const uint8_t> file);
Status parse_elf_core(std::span<const uint8_t> file, ImageLayout &out);
Status parse_lime(std::span<const uint8_t> file, ImageLayout &out);
// Checks that ranges are sane, sorted and inside a file of file_size bytes; sorts them.
Status validate_ranges(std::vector<RamRange> &ranges, uint64_t file_size);

} // namespace softdpu::apsh::source
