// Locating the running kernel in guest-physical memory: its top page table (kpgd), paging
// depth, KASLR slides, symbols and BTF types. Zero-config path: VMCOREINFO → kallsyms in RAM →
// the BTF between __start_BTF and __stop_BTF. Fallback when the caller supplies symbols (slid or
// System.map values): the linux_banner probe (2 MiB-congruent physical hits, then the virtual
// slide that maps the banner back to its page). KernelHints override what they set.
#pragma once

#include "apsh/introspection.hpp"
#include "apsh/kernel/btf.hpp"
#include "apsh/kernel/kallsyms.hpp"
#include "apsh/paging/address_space.hpp"
#include "apsh/source/physical_memory.hpp"

#include <memory>
#include <string>

namespace softdpu::apsh::kernel {

// __START_KERNEL_map: kernel-image virtual addresses are this plus the physical offset.
constexpr uint64_t start_kernel_map = 0xffffffff80000000ull;

struct KernelImage {
	uint64_t kpgd = 0;
	int levels = 4;
	uint64_t virtual_slide = 0; // KERNELOFFSET
	uint64_t phys_base = 0;     // wrapping: pa = va - start_kernel_map + phys_base
	std::string release;        // "6.1.0-56-amd64" when VMCOREINFO was found
	std::string method;         // how the kernel was located, for describe()
	Kallsyms symbols;           // slid addresses
	Btf btf;
	std::unique_ptr<paging::AddressSpace> kernel_space;

	std::optional<uint64_t> symbol(std::string_view name) const { return symbols.find(name); }
	uint64_t image_pa(uint64_t va) const { return va - start_kernel_map + phys_base; }
};

Status locate_kernel(const source::PhysicalMemory &memory, const KernelHints &hints, KernelImage &out);

// Which depth (4 or 5) translates every (va, pa) pair; 0 when neither does.
int detect_paging_depth(const source::PhysicalMemory &memory, uint64_t kpgd,
			std::span<const std::pair<uint64_t, uint64_t>> known);

} // namespace softdpu::apsh::kernel
