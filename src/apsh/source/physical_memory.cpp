#include "apsh/source/physical_memory.hpp"

#include "apsh/source/qemu_process.hpp"
#include "apsh/source/qmp.hpp"
#include "common/bytes.hpp"
#include "common/regular_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <type_traits>
#include <unistd.h>

namespace softdpu::apsh::source {

namespace {

Status error(doca_error_t code, std::string reason)
{
	return Status{code, std::move(reason)};
}

using common::load_le;

// One of <elf.h>'s structures (little-endian, as the host) read whole from `read` at `offset`.
template <typename T> bool read_struct(const ReadAt &read, uint64_t offset, T &out)
{
	static_assert(std::is_trivially_copyable_v<T>);
	return read(offset, std::span<uint8_t>(reinterpret_cast<uint8_t *>(&out), sizeof(T)));
}
// QEMUCPUState: version, size, 18 general registers, 10 segment descriptors of 24 bytes, cr[5].
constexpr size_t qemu_cpu_state_cr_offset = 8 + 18 * 8 + 10 * 24;

// The notes a parser reads at most: QEMU writes an NT_PRSTATUS note for every vCPU, then a QEMU
// note for every vCPU (about 800 bytes a vCPU); the first QEMU note is all that is used.
constexpr uint64_t max_notes_bytes = 4u << 20;
// Program headers of an ELF core with extended numbering (PN_XNUM): a segment per guest mapping,
// 65,731 on a 256 MiB guest; 4 M covers guests of hundreds of GiB and bounds what a forged count
// costs (one read and one range each).
constexpr uint32_t max_program_headers = 4u << 20;

constexpr uint32_t lime_magic = 0x4C694D45;
constexpr size_t lime_header_size = 32;

// A ReadAt over bytes in memory.
ReadAt read_span(std::span<const uint8_t> file)
{
	return [file](uint64_t offset, std::span<uint8_t> out) {
		if (offset > file.size() || out.size() > file.size() - offset)
			return false;
		if (!out.empty()) // an empty out (a PT_NOTE of size 0) may have no data pointer at all
			std::memcpy(out.data(), file.data() + offset, out.size());
		return true;
	};
}

// Firmware ROM below 4 GiB (QEMU dumps the BIOS as its own PT_LOAD); never guest RAM.
bool is_firmware_window(uint64_t start, uint64_t end)
{
	return start >= 0xfe000000ull && end <= 0x100000000ull;
}

void parse_qemu_note(std::span<const uint8_t> desc, CpuHints &cpu)
{
	if (desc.size() < qemu_cpu_state_cr_offset + size_t{5} * 8)
		return;
	// Only the first vCPU's registers: all vCPUs share the kernel's page tables.
	if (!cpu.cr3) {
		cpu.cr3 = load_le<uint64_t>(desc, qemu_cpu_state_cr_offset + size_t{3} * 8);
		cpu.cr4 = load_le<uint64_t>(desc, qemu_cpu_state_cr_offset + size_t{4} * 8);
	}
}

void parse_notes(std::span<const uint8_t> notes, CpuHints &cpu)
{
	size_t pos = 0;
	while (pos + sizeof(Elf64_Nhdr) <= notes.size()) {
		Elf64_Nhdr note;
		std::memcpy(&note, notes.data() + pos, sizeof(note));
		const uint32_t name_size = note.n_namesz;
		const uint32_t desc_size = note.n_descsz;
		size_t name_at = pos + sizeof(Elf64_Nhdr);
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

Status ImageFile::open(const std::string &path)
{
	path_ = path;
	common::OpenedFile opened;
	std::string reason;
	if (!common::open_data_file(path, common::FileKinds::regular_or_block_device, opened, reason))
		return error(opened.error_number != 0 ? DOCA_ERROR_NOT_FOUND : DOCA_ERROR_INVALID_VALUE,
			     path + ": " + reason);
	if (opened.size == 0)
		return error(DOCA_ERROR_INVALID_VALUE, path + ": not a memory image: the file is empty");
	fd_ = std::move(opened.fd);
	size_ = opened.size;
	block_device_ = opened.block_device;
	return Status::success();
}

uint64_t ImageFile::current_size() const
{
	struct stat info {};
	if (block_device_ || ::fstat(fd_.get(), &info) != 0)
		return size_;
	return static_cast<uint64_t>(info.st_size);
}

bool ImageFile::read(uint64_t offset, std::span<uint8_t> out, std::string &why) const
{
	size_t done = 0;
	while (done < out.size()) {
		const ssize_t n =
		    ::pread(fd_.get(), out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
		if (n > 0) {
			done += static_cast<size_t>(n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			why = path_ + ": read error at byte " + std::to_string(offset + done) + ": " +
			      std::strerror(errno);
			return false;
		}
		// The end of the file before the bytes the ranges promised: it shrank after it was opened.
		why = path_ + ": the file shrank while it was read: it is now " + std::to_string(current_size()) +
		      " bytes, it was " + std::to_string(size_) + " when opened (reading byte " +
		      std::to_string(offset + done) + ")";
		return false;
	}
	return true;
}

uint64_t ImageFile::next_data(uint64_t offset, uint64_t end) const
{
	if (offset >= end)
		return end;
	const off_t at = ::lseek(fd_.get(), static_cast<off_t>(offset), SEEK_DATA);
	if (at < 0) {
		// ENXIO: only holes up to the end of the file. If the file no longer reaches end, it shrank:
		// hand back offset, so that reading it reports that. Other errors: read it as data.
		if (errno == ENXIO && current_size() >= end)
			return end;
		return offset;
	}
	return std::clamp<uint64_t>(static_cast<uint64_t>(at), offset, end);
}

uint64_t ImageFile::data_end(uint64_t offset, uint64_t end) const
{
	if (offset >= end)
		return end;
	const off_t at = ::lseek(fd_.get(), static_cast<off_t>(offset), SEEK_HOLE);
	if (at < 0 || static_cast<uint64_t>(at) <= offset) // no SEEK_HOLE, or a race with a writer
		return end;
	return std::min<uint64_t>(static_cast<uint64_t>(at), end);
}

bool looks_like_elf_core(std::span<const uint8_t> file)
{
	return file.size() >= SELFMAG && std::memcmp(file.data(), ELFMAG, SELFMAG) == 0;
}

bool looks_like_lime(std::span<const uint8_t> file)
{
	return file.size() >= 4 && load_le<uint32_t>(file, 0) == lime_magic;
}

Status parse_elf_core(uint64_t file_size, const ReadAt &read, ImageLayout &out)
{
	out = {};
	Elf64_Ehdr header;
	if (file_size < sizeof(header) || !read_struct(read, 0, header) ||
	    !looks_like_elf_core(std::span<const uint8_t>(header.e_ident, SELFMAG)))
		return error(DOCA_ERROR_INVALID_VALUE, "not an ELF file");
	if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB)
		return error(DOCA_ERROR_NOT_SUPPORTED, "ELF core is not 64-bit little-endian");
	if (header.e_type != ET_CORE)
		return error(DOCA_ERROR_INVALID_VALUE, "ELF file is not a core dump (e_type != ET_CORE)");
	if (header.e_machine != EM_X86_64)
		return error(DOCA_ERROR_NOT_SUPPORTED, "ELF core is not for x86-64");
	const uint64_t ph_offset = header.e_phoff;
	const uint16_t ph_entry_size = header.e_phentsize;
	uint32_t ph_count = header.e_phnum;
	if (ph_count == PN_XNUM) {
		// More than 65534 segments (QEMU's dump-guest-memory with paging: one per guest mapping):
		// the real count is in section header 0's sh_info (ELF gABI, "Extended numbering").
		Elf64_Shdr first_section;
		if (header.e_shoff == 0 || header.e_shentsize < sizeof(Elf64_Shdr) || header.e_shoff > file_size ||
		    file_size - header.e_shoff < sizeof(Elf64_Shdr) ||
		    !read_struct(read, header.e_shoff, first_section))
			return error(DOCA_ERROR_INVALID_VALUE,
				     "ELF core: extended program header count without a readable section header 0");
		ph_count = first_section.sh_info;
		if (ph_count > max_program_headers)
			return error(DOCA_ERROR_INVALID_VALUE, "ELF core claims " + std::to_string(ph_count) +
								   " program headers (at most " +
								   std::to_string(max_program_headers) + ")");
	}
	if (ph_entry_size < sizeof(Elf64_Phdr) || ph_offset > file_size ||
	    uint64_t{ph_count} * ph_entry_size > file_size - ph_offset)
		return error(DOCA_ERROR_INVALID_VALUE, "ELF core is truncated: program headers lie outside the file");
	for (uint32_t i = 0; i < ph_count; i++) {
		Elf64_Phdr phdr;
		if (!read_struct(read, ph_offset + uint64_t{i} * ph_entry_size, phdr))
			return error(DOCA_ERROR_INVALID_VALUE,
				     "ELF core: program header " + std::to_string(i) + " cannot be read");
		const uint32_t type = phdr.p_type;
		const uint64_t offset = phdr.p_offset;
		const uint64_t paddr = phdr.p_paddr;
		const uint64_t segment_size = phdr.p_filesz;
		if (type == PT_NOTE) {
			if (offset <= file_size && segment_size <= file_size - offset) {
				// Only the first notes are read: parse_notes keeps what a cut-off list holds.
				std::vector<uint8_t> notes(std::min(segment_size, max_notes_bytes));
				if (read(offset, notes))
					parse_notes(notes, out.cpu);
			}
			continue;
		}
		if (type != PT_LOAD || segment_size == 0)
			continue;
		if (paddr + segment_size < paddr)
			return error(DOCA_ERROR_INVALID_VALUE, "ELF core: a PT_LOAD wraps around the address space");
		if (is_firmware_window(paddr, paddr + segment_size))
			continue;
		out.ranges.push_back({paddr, paddr + segment_size, offset});
	}
	if (out.ranges.empty())
		return error(DOCA_ERROR_INVALID_VALUE, "ELF core holds no RAM (no PT_LOAD segments)");
	return validate_ranges(out.ranges, file_size);
}

Status parse_lime(uint64_t file_size, const ReadAt &read, ImageLayout &out)
{
	out = {};
	uint64_t pos = 0;
	// Each range: a 32-byte header (magic, version, start, inclusive end, reserved), then its bytes.
	while (pos < file_size) {
		if (file_size - pos < lime_header_size)
			return error(DOCA_ERROR_INVALID_VALUE,
				     "LiME image is truncated: a range header is cut off at byte " +
					 std::to_string(pos));
		uint8_t header_bytes[lime_header_size];
		if (!read(pos, header_bytes))
			return error(DOCA_ERROR_INVALID_VALUE,
				     "LiME image: the range header at byte " + std::to_string(pos) + " cannot be read");
		const std::span<const uint8_t> header(header_bytes);
		if (load_le<uint32_t>(header, 0) != lime_magic)
			return error(DOCA_ERROR_INVALID_VALUE,
				     "LiME image is corrupt: no range header at byte " + std::to_string(pos));
		if (load_le<uint32_t>(header, 4) != 1)
			return error(DOCA_ERROR_NOT_SUPPORTED, "LiME version " +
								   std::to_string(load_le<uint32_t>(header, 4)) +
								   " is not supported (only version 1)");
		uint64_t start = load_le<uint64_t>(header, 8);
		uint64_t last = load_le<uint64_t>(header, 16);
		if (last < start || last == UINT64_MAX)
			return error(DOCA_ERROR_INVALID_VALUE, "LiME image is corrupt: a range ends before it starts");
		uint64_t length = last - start + 1;
		pos += lime_header_size;
		if (length > file_size - pos)
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
	return validate_ranges(out.ranges, file_size);
}

Status parse_elf_core(std::span<const uint8_t> file, ImageLayout &out)
{
	return parse_elf_core(file.size(), read_span(file), out);
}

Status parse_lime(std::span<const uint8_t> file, ImageLayout &out)
{
	return parse_lime(file.size(), read_span(file), out);
}

Status validate_ranges(std::vector<RamRange> &ranges, uint64_t file_size)
{
	for (const RamRange &range : ranges)
		if (range.gpa_end <= range.gpa_start)
			return error(DOCA_ERROR_INVALID_VALUE, "empty or inverted RAM range");
	std::sort(ranges.begin(), ranges.end(), [](const RamRange &a, const RamRange &b) {
		return a.gpa_start != b.gpa_start ? a.gpa_start < b.gpa_start : a.gpa_end < b.gpa_end;
	});
	// Ranges that overlap or touch and place the same guest-physical bytes at the same offsets
	// are one range: an ELF core written with paging has a segment per guest mapping, and the
	// kernel's direct map and its text map the same RAM.
	size_t kept = 0;
	for (size_t i = 0; i < ranges.size(); i++) {
		if (kept > 0) {
			RamRange &last = ranges[kept - 1];
			const RamRange &next = ranges[i];
			if (next.gpa_start <= last.gpa_end &&
			    next.file_offset - next.gpa_start == last.file_offset - last.gpa_start) {
				last.gpa_end = std::max(last.gpa_end, next.gpa_end);
				continue;
			}
		}
		ranges[kept++] = ranges[i];
	}
	ranges.resize(kept);
	for (size_t i = 0; i < ranges.size(); i++) {
		const RamRange &range = ranges[i];
		uint64_t length = range.gpa_end - range.gpa_start;
		if (range.file_offset > file_size || length > file_size - range.file_offset)
			return error(DOCA_ERROR_INVALID_VALUE, "image is truncated: RAM range at GPA " +
								   common::hex(range.gpa_start) +
								   " lies past the end of the file");
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
	if (spec.kind == SourceKind::qemu_pid || spec.kind == SourceKind::qemu_name ||
	    spec.kind == SourceKind::libvirt_domain) {
		std::unique_ptr<QemuProcessMemory> process;
		std::vector<RamRange> ranges;
		Status opened = open_qemu_process(spec, process, ranges);
		if (!opened.ok())
			return opened;
		if (!spec.ranges.empty()) {
			// The caller's GPA ranges only restrict what may be read; the HVAs stay QEMU's.
			std::vector<RamRange> restricted;
			for (const RamRange &want : spec.ranges)
				for (const RamRange &have : ranges) {
					const uint64_t start = std::max(want.gpa_start, have.gpa_start);
					const uint64_t end = std::min(want.gpa_end, have.gpa_end);
					if (start < end)
						restricted.push_back(
						    {start, end, have.file_offset + (start - have.gpa_start)});
				}
			if (restricted.empty())
				return error(DOCA_ERROR_INVALID_VALUE,
					     process->describe() + ": memory regions: none of them is guest RAM");
			ranges = std::move(restricted);
		}
		// Sorted and non-overlapping, as every source's ranges (offsets are host addresses).
		Status valid = validate_ranges(ranges, UINT64_MAX);
		if (!valid.ok())
			return error(valid.code, process->describe() + ": " + valid.reason);
		memory->kind_name_ = "QEMU process";
		memory->process_id_ = process->pid();
		memory->ranges_ = std::move(ranges);
		memory->file_ = std::move(process);
		out = std::move(memory);
		return Status::success();
	}
	auto image = std::make_unique<ImageFile>();
	Status status = image->open(spec.path);
	if (!status.ok())
		return status;
	const ImageFile &file = *image;
	memory->file_ = std::move(image);
	const uint64_t size = file.size();
	const std::string &path = spec.path;
	// The header parsers read through this; a failed read (the file shrank) is reported as such.
	std::string read_failure;
	const ReadAt read_at = [&](uint64_t offset, std::span<uint8_t> bytes) {
		std::string why;
		if (file.read(offset, bytes, why))
			return true;
		if (read_failure.empty())
			read_failure = why;
		return false;
	};

	SourceKind kind = spec.kind;
	if (kind == SourceKind::automatic) {
		uint8_t magic[4] = {};
		const bool has_magic = size >= sizeof(magic) && read_at(0, magic);
		kind = has_magic && looks_like_elf_core(magic) ? SourceKind::elf_core
		       : has_magic && looks_like_lime(magic)   ? SourceKind::lime
							       : SourceKind::raw;
	}

	ImageLayout layout;
	switch (kind) {
	case SourceKind::elf_core:
		memory->kind_name_ = "ELF core";
		status = parse_elf_core(size, read_at, layout);
		break;
	case SourceKind::lime:
		memory->kind_name_ = "LiME";
		status = parse_lime(size, read_at, layout);
		break;
	case SourceKind::qemu_pid: // handled above
	case SourceKind::qemu_name:
	case SourceKind::libvirt_domain:
	case SourceKind::qemu_shared_ram:
	case SourceKind::raw:
	case SourceKind::automatic:
		memory->kind_name_ = kind == SourceKind::qemu_shared_ram ? "QEMU shared RAM" : "raw";
		if (size < (1u << 20))
			return error(DOCA_ERROR_INVALID_VALUE,
				     path + ": not a memory image: " + std::to_string(size) + " bytes is too small");
		if (!spec.qmp_socket.empty() && spec.ranges.empty()) {
			status = query_qmp_ram_ranges(spec.qmp_socket, layout.ranges);
			if (!status.ok())
				return error(status.code, path + ": " + status.reason);
		} else if (size > 0xc0000000ull) {
			// QEMU's pc machine: the first 3 GiB at offset = GPA, the rest above 4 GiB.
			layout.ranges = {{0, 0xc0000000ull, 0},
					 {1ull << 32, (1ull << 32) + size - 0xc0000000ull, 0xc0000000ull}};
		} else {
			layout.ranges = {{0, size, 0}};
		}
		status = validate_ranges(layout.ranges, size);
		break;
	}
	if (!read_failure.empty())
		return error(DOCA_ERROR_IO_FAILED, read_failure);
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
		status = validate_ranges(ranges, size);
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

void PhysicalMemory::begin_query() const
{
	std::lock_guard lock(cache_mutex_);
	cache_active_ = file_ != nullptr;
	if (!cache_held_)
		std::fill(cache_tags_.begin(), cache_tags_.end(), 0);
}

void PhysicalMemory::end_query() const
{
	std::lock_guard lock(cache_mutex_);
	if (cache_held_)
		return;
	cache_active_ = false;
	std::fill(cache_tags_.begin(), cache_tags_.end(), 0);
}

void PhysicalMemory::hold_cache(bool hold) const
{
	std::lock_guard lock(cache_mutex_);
	cache_held_ = hold;
	cache_active_ = hold && file_ != nullptr;
	std::fill(cache_tags_.begin(), cache_tags_.end(), 0);
}

bool PhysicalMemory::read_cached(uint64_t offset, std::span<uint8_t> out) const
{
	// Only small reads inside one page; false: not served here (read the file directly).
	constexpr uint64_t page = 4096;
	if (out.size() > max_cached_read || (offset % page) + out.size() > page)
		return false;
	std::lock_guard lock(cache_mutex_);
	if (!cache_active_)
		return false;
	if (cache_tags_.empty()) {
		cache_tags_.assign(cache_pages, 0);
		cache_stamp_.assign(cache_pages, 0);
		cache_bytes_.resize(cache_pages * page);
	}
	const uint64_t index = offset / page;
	// The set by a mix of the page index (physical pages a walk uses together are often a
	// power-of-two stride apart), then the way that holds the page, or the least recently used.
	const uint64_t mixed = (index * 0x9e3779b97f4a7c15u) >> 32;
	const size_t set = static_cast<size_t>(mixed % cache_sets) * cache_ways;
	size_t slot = set;
	for (size_t way = set; way < set + cache_ways; ++way) {
		if (cache_tags_[way] == index + 1) {
			slot = way;
			break;
		}
		if (cache_stamp_[way] < cache_stamp_[slot])
			slot = way;
	}
	cache_stamp_[slot] = ++cache_clock_;
	uint8_t *bytes = cache_bytes_.data() + slot * page;
	if (cache_tags_[slot] != index + 1) {
		// The whole page as far as the file went when opened; a short read (the file shrank) is
		// left to the direct read, which reports it if the bytes asked for are gone.
		const uint64_t length = std::min(page, file_->size() - index * page);
		std::string ignored;
		if (!file_->read(index * page, {bytes, static_cast<size_t>(length)}, ignored)) {
			cache_tags_[slot] = 0;
			return false;
		}
		cache_tags_[slot] = index + 1;
	}
	std::memcpy(out.data(), bytes + offset % page, out.size());
	return true;
}

bool PhysicalMemory::read_source(uint64_t offset, std::span<uint8_t> out, std::string *why) const
{
	if (!file_) {
		// over_bytes: validate_ranges kept every range inside bytes_.
		std::memcpy(out.data(), bytes_.data() + offset, out.size());
		return true;
	}
	if (read_cached(offset, out))
		return true;
	std::string reason;
	if (file_->read(offset, out, reason))
		return true;
	record_failure(reason);
	if (why)
		*why = std::move(reason);
	return false;
}

void PhysicalMemory::record_failure(const std::string &why) const
{
	std::lock_guard lock(failure_mutex_);
	if (!failed_.load(std::memory_order_relaxed)) {
		failure_ = why;
		failed_.store(true, std::memory_order_release);
	}
}

Status PhysicalMemory::failure() const
{
	if (!failed_.load(std::memory_order_acquire))
		return Status::success();
	std::lock_guard lock(failure_mutex_);
	return error(DOCA_ERROR_IO_FAILED, failure_);
}

void PhysicalMemory::clear_failure() const
{
	std::lock_guard lock(failure_mutex_);
	failed_.store(false, std::memory_order_release);
	failure_.clear();
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
		if (!read_source(range->file_offset + (at - range->gpa_start), out.subspan(done, chunk)))
			return false;
		done += chunk;
	}
	return true;
}

size_t ByteSource::read_pieces(std::span<const Piece> pieces, std::string &why) const
{
	for (size_t i = 0; i < pieces.size(); ++i)
		if (!read(pieces[i].offset, pieces[i].out, why))
			return i;
	return pieces.size();
}

void PhysicalMemory::read_pages(std::span<const uint64_t> gpas, std::span<uint8_t> out, std::span<uint8_t> ok) const
{
	// Kept per thread from call to call: a watch's poll makes many of these calls, and the source
	// may be read from several threads at once.
	thread_local std::vector<ByteSource::Piece> pieces;
	thread_local std::vector<size_t> index; // pieces[j] is page index[j]
	pieces.clear();
	index.clear();
	for (size_t i = 0; i < gpas.size(); ++i) {
		const std::span<uint8_t> page = out.subspan(i * kPageBytes, kPageBytes);
		const RamRange *range = range_for(gpas[i]);
		if (file_ && range && range->gpa_end - gpas[i] >= kPageBytes) {
			pieces.push_back({range->file_offset + (gpas[i] - range->gpa_start), page});
			index.push_back(i);
		} else {
			ok[i] = read(gpas[i], page) ? 1 : 0; // over bytes, outside RAM, or across ranges
		}
	}
	std::span<const ByteSource::Piece> rest = pieces;
	size_t at = 0;
	while (!rest.empty()) {
		std::string why;
		const size_t done = file_->read_pieces(rest, why);
		for (size_t j = 0; j < done; ++j)
			ok[index[at + j]] = 1;
		if (done == rest.size())
			break;
		// As read() of that page: the failure is recorded, the page is not read; the rest are tried.
		record_failure(why);
		ok[index[at + done]] = 0;
		at += done + 1;
		rest = rest.subspan(done + 1);
	}
}

uint64_t PhysicalMemory::next_data(uint64_t gpa) const
{
	const RamRange *range = range_for(gpa);
	if (!range || !file_)
		return gpa;
	const uint64_t file_at = range->file_offset + (gpa - range->gpa_start);
	const uint64_t file_end = range->file_offset + (range->gpa_end - range->gpa_start);
	return range->gpa_start + (file_->next_data(file_at, file_end) - range->file_offset);
}

Status PhysicalMemory::scan(const ScanOptions &options, const std::function<bool(const ScanWindow &)> &visit) const
{
	const uint64_t chunk = std::max<size_t>(options.chunk_bytes, 1);
	std::vector<uint8_t> buffer; // grows to lookbehind + chunk + lookahead at most
	for (const RamRange &range : ranges_) {
		const uint64_t length = range.gpa_end - range.gpa_start;
		const uint64_t file_end = range.file_offset + length;
		uint64_t pos = 0;                     // offset in the range
		uint64_t run_end = range.file_offset; // end of the run of data being read (file offset)
		while (pos < length) {
			// Skip the holes: they hold zeros. Each run of data is located once (SEEK_HOLE costs
			// time in proportion to the run on tmpfs: once per window would be quadratic).
			uint64_t data = range.file_offset + pos;
			if (!file_) {
				run_end = file_end;
			} else if (data >= run_end) {
				data = file_->next_data(data, file_end);
				if (data >= file_end)
					break;
				run_end = file_->data_end(data, file_end);
			}
			const uint64_t data_end = std::min(run_end, data + chunk);
			pos = data - range.file_offset;
			const uint64_t body = data_end - data;
			const uint64_t before = std::min<uint64_t>(options.lookbehind, pos);
			const uint64_t after = std::min<uint64_t>(options.lookahead, length - pos - body);
			buffer.resize(static_cast<size_t>(before + body + after));
			std::string why;
			if (!read_source(data - before, buffer, &why))
				return error(DOCA_ERROR_IO_FAILED, why);
			const ScanWindow window{range.gpa_start + pos - before, buffer, static_cast<size_t>(before),
						static_cast<size_t>(before + body)};
			if (!visit(window))
				return Status::success();
			pos += body;
		}
	}
	return Status::success();
}

uint64_t PhysicalMemory::total_bytes() const
{
	uint64_t total = 0;
	for (const RamRange &range : ranges_)
		total += range.gpa_end - range.gpa_start;
	return total;
}

} // namespace softdpu::apsh::source
