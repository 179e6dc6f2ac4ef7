// VMCOREINFO: the kernel's crash-dump description, plain "KEY=value" lines in a page of RAM.
// It gives the release, the KASLR slide (KERNELOFFSET), phys_base, the paging depth and slid
// addresses of init_top_pgt and (since 6.0) the kallsyms tables, so no symbol file is needed.
#pragma once

#include "apsh/introspection.hpp"
#include "apsh/source/physical_memory.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace softdpu::apsh::kernel {

struct VmcoreInfo {
	std::string osrelease;
	std::string build_id;
	std::optional<uint64_t> kernel_offset;                    // KERNELOFFSET: the virtual slide
	std::unordered_map<std::string, uint64_t> symbols;        // SYMBOL(name)=hex
	std::unordered_map<std::string, int64_t> numbers;         // NUMBER(name)=signed decimal
	std::unordered_map<std::string, uint64_t> sizes, offsets; // SIZE(x), OFFSET(x.y)

	std::optional<uint64_t> symbol(const std::string &name) const;
	// phys_base as a wrapping u64: it is printed signed and can be negative.
	std::optional<uint64_t> phys_base() const;
	std::optional<bool> five_level() const;
};

// Parses the note text (stops at the first NUL). Needs OSRELEASE; other keys are optional.
Status parse_vmcoreinfo(std::string_view text, VmcoreInfo &out);

// Scans RAM for "OSRELEASE=" followed, within the same page-sized note, by "KERNELOFFSET=";
// a note at page offset 0 or 24 (where the kernel puts it) wins over one elsewhere. One pass in
// bounded windows that skips the holes of a sparse image: memory stays at about 1 MiB and the
// time grows with the bytes the image holds, not with its size. Fails with the source's read
// error when the file cannot be read (it shrank), NOT_FOUND when there is no note.
Status find_vmcoreinfo(const source::PhysicalMemory &memory, VmcoreInfo &out, uint64_t *found_at = nullptr);

} // namespace softdpu::apsh::kernel
