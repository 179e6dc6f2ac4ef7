#include "apsh/source/physical_memory.hpp"

#include "apsh/source/qmp.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace softdpu::apsh::source {

namespace {

Status error(doca_error_t code, std::string reason)
{
	return Status{code, std::move(reason)};
}

template <typename T> T load(std::span<const uint8_t> bytes, size_t offset)
{
	T value;
	std::memcpy(&value, bytes.data() + offset, sizeof(T));
	return value;
}

// Little-endian ELF64 constants (only what a QEMU core uses).
constexpr uint8_t elf_magic[4] = {0x7f, 'E', 'L', 'F'};
constexpr uint16_t et_core = 4;
constexpr uint16_t em_x86_64 = 62;
constexpr uint32_t pt_load = 1;
constexpr uint32_t pt_note = 4;
constexpr size_t elf64_ehdr_size = 64;
constexpr size_t elf64_phdr_size = 56;
// QEMUCPUState: version, size, 18 general registers, 10 segment descriptors of 24 bytes, cr[5].
constexpr size_t qemu_cpu_state_cr_offset = 8 + 18 * 8 + 10 * 24;

constexpr uint32_t lime_magic = 0x4C694D45;
constexpr size_t lime_header_size = 32;

// Firmware ROM below 4 GiB (QEMU dumps the BIOS as its own PT_LOAD); never guest RAM.
bool is_firmware_window(uint64_t start, uint64_t end)
{
	return start >= 0xfe000000ull && end <= 0x100000000ull;
}

void parse_qemu_note(std::span<const uint8_t> desc, CpuHints &cpu)
{
	if (desc.size() < qemu_cpu_state_cr_offset + 5 * 8)
		return;
	// Only the first vCPU's registers: all vCPUs share the kernel's page tables.
	if (!cpu.cr3) {
		cpu.cr3 = load<uint64_t>(desc, qemu_cpu_state_cr_offset + 3 * 8);
		cpu.cr4 = load<uint64_t>(desc, qemu_cpu_state_cr_offset + 4 * 8);
	}
}

void parse_notes(std::span<const uint8_t> notes, CpuHints &cpu)
{
	size_t pos = 0;
	while (pos + 12 <= notes.size()) {
		uint32_t name_size = load<uint32_t>(notes, pos);
		uint32_t desc_size = load<uint32_t>(notes, pos + 4);
		size_t name_at = pos + 12;
		size_t name_padded = (uint64_t{name_size} + 3) & ~uint64_t{3};
		size_t desc_padded = (uint64_t{desc_size} + 3) & ~uint64_t{3};
		if (name_padded > notes.size() - name_at || desc_padded > notes.size() - name_at - name_padded)
			return; // truncated note: keep what was found so far
		std::string_view name(reinterpret_cast<const char *>(notes.data() + name_at), name_size);
		if (name == std::string_view("QEMU\0", 5) || name == "QEMU")
			parse_qemu_note(notes.subspan(name_at + name_padded, desc_size), cpu);
		pos = name_at + name_padded + desc_padded;
	}
}

} // namespace

MappedFile::~MappedFile()
{
	if (data_ && size_)
		munmap(const_cast<uint8_t *>(data_), size_);
}

Status MappedFile::open(const std::string &path)
{
	path_ = path;
	int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return error(DOCA_ERROR_NOT_FOUND, path + ": cannot open: " + std::strerror(errno));
	struct stat st {};
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		::close(fd);
		return error(DOCA_ERROR_INVALID_VALUE, path + ": not a regular file");
	}
	size_ = static_cast<size_t>(st.st_size);
	if (size_ == 0) {
		::close(fd);
		return error(DOCA_ERROR_INVALID_VALUE, path + ": not a memory image: the file is empty");
	}
	void *mapping = mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
	::close(fd);
	if (mapping == MAP_FAILED) {
		size_ = 0;
		return error(DOCA_ERROR_IO_FAILED, path + ": cannot map: " + std::strerror(errno));
	}
	// Page tables and lists are read in scattered order; tell the kernel not to read ahead.
	madvise(mapping, size_, MADV_RANDOM);
	data_ = static_cast<const uint8_t *>(mapping);
	return Status::success();
}

bool looks_like_elf_core(std::span<const uint8_t> file)
{
	return file.size() >= 4 && std::memcmp(file.data(), elf_magic, 4) == 0;
}

bool looks_like_lime(std::span<const uint8_t> file)
{
	return file.size() >= 4 && load<uint32_t>(file, 0) == lime_magic;
}

Status parse_elf_core(std::span<const uint8_t> file, ImageLayout &out)
{
	out = {};
	if (file.size() < elf64_ehdr_size || !looks_like_elf_core(file))
		return error(DOCA_ERROR_INVALID_VALUE, "not an ELF file");
	if (file[4] != 2 || file[5] != 1)
		return error(DOCA_ERROR_NOT_SUPPORTED, "ELF core is not 64-bit little-endian");
	if (load<uint16_t>(file, 16) != et_core)
		return error(DOCA_ERROR_INVALID_VALUE, "ELF file is not a core dump (e_type != ET_CORE)");
	if (load<uint16_t>(file, 18) != em_x86_64)
		return error(DOCA_ERROR_NOT_SUPPORTED, "ELF core is not for x86-64");
	uint64_t ph_offset = load<uint64_t>(file, 32);
	uint16_t ph_entry_size = load<uint16_t>(file, 54);
	uint32_t ph_count = load<uint16_t>(file, 56);
	if (ph_count == 0xffff)
		return error(DOCA_ERROR_NOT_SUPPORTED, "ELF core with extended program header count");
	if (ph_entry_size < elf64_phdr_size || ph_offset > file.size() ||
	    uint64_t{ph_count} * ph_entry_size > file.size() - ph_offset)
		return error(DOCA_ERROR_INVALID_VALUE, "ELF core is truncated: program headers lie outside the file");
	for (uint32_t i = 0; i < ph_count; i++) {
		auto header = file.subspan(ph_offset + uint64_t{i} * ph_entry_size, elf64_phdr_size);
		uint32_t type = load<uint32_t>(header, 0);
		uint64_t offset = load<uint64_t>(header, 8);
		uint64_t paddr = load<uint64_t>(header, 24);
		uint64_t file_size = load<uint64_t>(header, 32);
		if (type == pt_note) {
			if (offset <= file.size() && file_size <= file.size() - offset)
				parse_notes(file.subspan(offset, file_size), out.cpu);
			continue;
		}
		if (type != pt_load || file_size == 0)
			continue;
		if (paddr + file_size < paddr)
			return error(DOCA_ERROR_INVALID_VALUE, "ELF core: a PT_LOAD wraps around the address space");
		if (is_firmware_window(paddr, paddr + file_size))
			continue;
		out.ranges.push_back({paddr, paddr + file_size, offset});
	}
	if (out.ranges.empty())
		return error(DOCA_ERROR_INVALID_VALUE, "ELF core holds no RAM (no PT_LOAD segments)");
	return validate_ranges(out.ranges, file.size());
}

Status parse_lime(std::span<const uint8_t> file, ImageLayout &out)
{
	out = {};
	uint64_t pos = 0;
	// Each range: a 32-byte header (magic, version, start, inclusive end, reserved), then its bytes.
	while (pos < file.size()) {
		if (file.size() - pos < lime_header_size)
			return error(DOCA_ERROR_INVALID_VALUE,
				     "LiME image is truncated: a range header is cut off at byte " +
					 std::to_string(pos));
		auto header = file.subspan(pos, lime_header_size);
		if (load<uint32_t>(header, 0) != lime_magic)
			return error(DOCA_ERROR_INVALID_VALUE,
				     "LiME image is corrupt: no range header at byte " + std::to_string(pos));
		if (load<uint32_t>(header, 4) != 1)
			return error(DOCA_ERROR_NOT_SUPPORTED, "LiME version " +
								   std::to_string(load<uint32_t>(header, 4)) +
								   " is not supported (only version 1)");
		uint64_t start = load<uint64_t>(header, 8);
		uint64_t last = load<uint64_t>(header, 16);
		if (last < start || last == UINT64_MAX)
			return error(DOCA_ERROR_INVALID_VALUE, "LiME image is corrupt: a range ends before it starts");
		uint64_t length = last - start + 1;
		pos += lime_header_size;
		if (length > file.size() - pos)
			return error(DOCA_ERROR_INVALID_VALUE, "LiME image is truncated: the range at " +
								   std::to_string(start) +
								   " runs past the end of the file");
		out.ranges.push_back({start, last + 1, pos});
		pos += length;
		if (out.ranges.size() > 65536)
			return error(DOCA_ERROR_INVALID_VALUE, "LiME image has too many ranges");
	}
	if (out.ranges.empty())
		return error(DOCA_ERROR_INVALID_VALUE, "LiME image holds no ranges");
	return validate_ranges(out.ranges, file.size());
}

Status validate_ranges(std::vector<RamRange> &ranges, uint64_t file_size)
{
	std::sort(ranges.begin(), ranges.end(),
		  [](const RamRange &a, const RamRange &b) { return a.gpa_start < b.gpa_start; });
	for (size_t i = 0; i < ranges.size(); i++) {
		const RamRange &range = ranges[i];
		if (range.gpa_end <= range.gpa_start)
			return error(DOCA_ERROR_INVALID_VALUE, "empty or inverted RAM range");
		uint64_t length = range.gpa_end - range.gpa_start;
		if (range.file_offset > file_size || length > file_size - range.file_offset)
			return error(
			    DOCA_ERROR_INVALID_VALUE, "image is truncated: RAM range at GPA 0x" + [&] {
				    char text[32];
				    std::snprintf(text, sizeof(text), "%llx",
						  static_cast<unsigned long long>(range.gpa_start));
				    return std::string(text);
			    }() + " lies past the end of the file");
		if (i > 0 && range.gpa_start < ranges[i - 1].gpa_end)
			return error(DOCA_ERROR_INVALID_VALUE, "RAM ranges overlap");
	}
	return Status::success();
}

Status PhysicalMemory::over_bytes(std::span<const uint8_t> bytes, std::vector<RamRange> ranges,
				  std::unique_ptr<PhysicalMemory> &out)
{
	Status status = validate_ranges(ranges, bytes.size());
	if (!status.ok())
		return status;
	std::unique_ptr<PhysicalMemory> memory(new PhysicalMemory());
	memory->bytes_ = bytes;
	memory->ranges_ = std::move(ranges);
	out = std::move(memory);
	return Status::success();
}

Status PhysicalMemory::open(const SourceSpec &spec, std::unique_ptr<PhysicalMemory> &out)
{
	std::unique_ptr<PhysicalMemory> memory(new PhysicalMemory());
	Status status = memory->file_.open(spec.path);
	if (!status.ok())
		return status;
	auto bytes = memory->file_.bytes();
	memory->bytes_ = bytes;
	const std::string &path = spec.path;

	SourceKind kind = spec.kind;
	if (kind == SourceKind::automatic)
		kind = looks_like_elf_core(bytes) ? SourceKind::elf_core
		       : looks_like_lime(bytes)   ? SourceKind::lime
						  : SourceKind::raw;

	ImageLayout layout;
	switch (kind) {
	case SourceKind::elf_core:
		memory->kind_name_ = "ELF core";
		status = parse_elf_core(bytes, layout);
		break;
	case SourceKind::lime:
		memory->kind_name_ = "LiME";
		status = parse_lime(bytes, layout);
		break;
	case SourceKind::qemu_shared_ram:
	case SourceKind::raw:
	case SourceKind::automatic:
		memory->kind_name_ = kind == SourceKind::qemu_shared_ram ? "QEMU shared RAM" : "raw";
		if (bytes.size() < (1u << 20))
			return error(DOCA_ERROR_INVALID_VALUE,
				     path + ": not a memory image: " + std::to_string(bytes.size()) +
					 " bytes is too small");
		if (!spec.qmp_socket.empty() && spec.ranges.empty()) {
			status = query_qmp_ram_ranges(spec.qmp_socket, layout.ranges);
			if (!status.ok())
				return error(status.code, path + ": " + status.reason);
		} else if (bytes.size() > 0xc0000000ull) {
			// QEMU's pc machine: the first 3 GiB at offset = GPA, the rest above 4 GiB.
			layout.ranges = {{0, 0xc0000000ull, 0},
					 {1ull << 32, (1ull << 32) + bytes.size() - 0xc0000000ull, 0xc0000000ull}};
		} else {
			layout.ranges = {{0, bytes.size(), 0}};
		}
		status = validate_ranges(layout.ranges, bytes.size());
		break;
	}
	if (!status.ok())
		return error(status.code, path + ": " + status.reason);
	if (!spec.ranges.empty()) {
		// The caller's ranges are GPAs of the guest; in an ELF core or LiME file their file
		// offsets are the image's, so keep the header's ranges there and only restrict them.
		std::vector<RamRange> ranges = spec.ranges;
		if (kind == SourceKind::elf_core || kind == SourceKind::lime) {
			std::vector<RamRange> restricted;
			for (const RamRange &want : ranges)
				for (const RamRange &have : layout.ranges) {
					uint64_t start = std::max(want.gpa_start, have.gpa_start);
					uint64_t end = std::min(want.gpa_end, have.gpa_end);
					if (start < end)
						restricted.push_back(
						    {start, end, have.file_offset + (start - have.gpa_start)});
				}
			ranges = std::move(restricted);
		}
		status = validate_ranges(ranges, bytes.size());
		if (!status.ok())
			return error(status.code, path + ": memory regions: " + status.reason);
		layout.ranges = std::move(ranges);
	}
	memory->ranges_ = std::move(layout.ranges);
	memory->cpu_ = layout.cpu;
	out = std::move(memory);
	return Status::success();
}

const RamRange *PhysicalMemory::range_for(uint64_t gpa) const
{
	// Few ranges (usually 1 to 3): upper_bound on the sorted starts.
	auto it = std::upper_bound(ranges_.begin(), ranges_.end(), gpa,
				   [](uint64_t value, const RamRange &range) { return value < range.gpa_start; });
	if (it == ranges_.begin())
		return nullptr;
	--it;
	return gpa < it->gpa_end ? &*it : nullptr;
}

std::span<const uint8_t> PhysicalMemory::view(uint64_t gpa, size_t length) const
{
	const RamRange *range = range_for(gpa);
	if (!range || length > range->gpa_end - gpa)
		return {};
	return bytes_.subspan(range->file_offset + (gpa - range->gpa_start), length);
}

bool PhysicalMemory::read(uint64_t gpa, std::span<uint8_t> out) const
{
	size_t done = 0;
	while (done < out.size()) {
		const RamRange *range = range_for(gpa + done);
		if (!range)
			return false;
		uint64_t at = gpa + done;
		size_t chunk = static_cast<size_t>(std::min<uint64_t>(out.size() - done, range->gpa_end - at));
		std::memcpy(out.data() + done, bytes_.data() + range->file_offset + (at - range->gpa_start), chunk);
		done += chunk;
	}
	return true;
}

uint64_t PhysicalMemory::total_bytes() const
{
	uint64_t total = 0;
	for (const RamRange &range : ranges_)
		total += range.gpa_end - range.gpa_start;
	return total;
}

} // namespace softdpu::apsh::source
