#include "apsh/kernel/kernel_image.hpp"

#include "apsh/kernel/vmcoreinfo.hpp"
#include "common/bytes.hpp"

#include <array>
#include <cstring>
#include <vector>

namespace softdpu::apsh::kernel {

namespace {

constexpr uint64_t two_mib = 2ull << 20;
constexpr uint64_t max_btf_bytes = 64ull << 20;
constexpr uint64_t max_virtual_slide_steps = 512; // KASLR keeps the image within 1 GiB
constexpr uint64_t cr4_la57 = 1ull << 12;

Status fail(doca_error_t code, std::string reason)
{
	return Status{code, std::move(reason)};
}

using common::hex;

std::optional<uint64_t> hint_symbol(const KernelHints &hints, const char *name)
{
	auto it = hints.symbols.find(name);
	if (it == hints.symbols.end())
		return std::nullopt;
	return it->second;
}

Status decode_kallsyms_from_vmcoreinfo(const VmcoreInfo &info, const paging::AddressSpace &kernel, Kallsyms &out)
{
	KallsymsTables tables;
	auto need = [&](const char *name, uint64_t &field) {
		auto value = info.symbol(name);
		if (value)
			field = *value;
		return value.has_value();
	};
	if (!need("kallsyms_num_syms", tables.num_syms) || !need("kallsyms_names", tables.names) ||
	    !need("kallsyms_token_table", tables.token_table) || !need("kallsyms_token_index", tables.token_index) ||
	    !need("kallsyms_offsets", tables.offsets) || !need("kallsyms_relative_base", tables.relative_base))
		return fail(DOCA_ERROR_NOT_SUPPORTED,
			    "VMCOREINFO does not locate kallsyms (Linux before 6.0, or another layout)");
	return Kallsyms::decode(kernel, tables, out);
}

// linux_banner probe: physical hits of "Linux version " congruent to the banner's address
// modulo 2 MiB (the kernel is loaded 2 MiB-aligned), checked by translating through the page
// table that the same shift implies.
Status probe_banner(const source::PhysicalMemory &memory, const KernelHints &hints, KernelImage &out)
{
	auto banner = hint_symbol(hints, "linux_banner");
	auto top = hint_symbol(hints, "init_top_pgt");
	if (!top)
		top = hint_symbol(hints, "swapper_pg_dir");
	if (!banner || !top)
		return fail(
		    DOCA_ERROR_NOT_FOUND,
		    "no VMCOREINFO in RAM, and the symbol map lacks linux_banner or init_top_pgt to find the kernel");
	static constexpr std::string_view text = "Linux version ";
	uint64_t relative = *banner - start_kernel_map;
	for (const RamRange &range : memory.ranges()) {
		uint64_t first = (range.gpa_start & ~(two_mib - 1)) | (relative & (two_mib - 1));
		if (first < range.gpa_start)
			first += two_mib;
		for (uint64_t pa = first; pa + text.size() <= range.gpa_end && pa >= first; pa += two_mib) {
			// Holes of a sparse image hold zeros: jump to the first probe at or after the next data.
			const uint64_t data = memory.next_data(pa);
			if (data >= range.gpa_end)
				break;
			if (data > pa) {
				pa += (data - pa + two_mib - 1) & ~(two_mib - 1);
				if (pa + text.size() > range.gpa_end || pa < first)
					break;
			}
			std::array<uint8_t, text.size()> bytes;
			if (!memory.read(pa, bytes) || std::memcmp(bytes.data(), text.data(), text.size()) != 0) {
				if (Status failure = memory.failure(); !failure.ok())
					return failure;
				continue;
			}
			uint64_t shift = pa - relative; // phys_base for slid symbols, the physical shift otherwise
			uint64_t kpgd = hints.kpgd.value_or(*top - start_kernel_map + shift);
			if (hints.symbols_are_slid) {
				std::pair<uint64_t, uint64_t> known[] = {{*banner, pa}};
				int levels = detect_paging_depth(memory, kpgd, known);
				if (!levels)
					continue;
				out.kpgd = kpgd;
				out.levels = levels;
				out.phys_base = shift;
				auto text_start = hint_symbol(hints, "_text");
				out.virtual_slide = text_start ? *text_start - 0xffffffff81000000ull : 0;
				out.method = "linux_banner probe";
				return Status::success();
			}
			for (int levels : {5, 4}) {
				paging::AddressSpace space(memory, kpgd, levels);
				for (uint64_t step = 0; step < max_virtual_slide_steps; step++) {
					uint64_t slide = step * two_mib;
					auto translated = space.translate(*banner + slide);
					if (!translated || *translated != pa)
						continue;
					out.kpgd = kpgd;
					out.levels = levels;
					out.virtual_slide = slide;
					out.phys_base = shift - slide;
					out.method = "linux_banner probe";
					return Status::success();
				}
			}
		}
	}
	return fail(DOCA_ERROR_NOT_FOUND,
		    "not a memory image of this kernel: no linux_banner at a place the page tables confirm");
}

Status load_btf_from_memory(const KernelImage &image, Btf &out)
{
	auto start = image.symbol("__start_BTF");
	auto stop = image.symbol("__stop_BTF");
	if (!start || !stop)
		return fail(DOCA_ERROR_NOT_SUPPORTED,
			    "the kernel has no BTF (__start_BTF missing; CONFIG_DEBUG_INFO_BTF off?)");
	if (*stop <= *start || *stop - *start > max_btf_bytes)
		return fail(DOCA_ERROR_INVALID_VALUE, "implausible BTF bounds " + hex(*start) + ".." + hex(*stop));
	std::vector<uint8_t> blob(*stop - *start);
	if (!image.kernel_space->read_exact(*start, blob))
		return fail(DOCA_ERROR_NOT_FOUND, "the kernel's BTF is not mapped");
	Status status = Btf::parse(blob, out);
	if (!status.ok())
		return fail(status.code, "BTF in guest memory: " + status.reason);
	return status;
}

} // namespace

int detect_paging_depth(const source::PhysicalMemory &memory, uint64_t kpgd,
			std::span<const std::pair<uint64_t, uint64_t>> known)
{
	for (int levels : {5, 4}) {
		paging::AddressSpace space(memory, kpgd, levels);
		bool all = !known.empty();
		for (auto [va, pa] : known) {
			auto translated = space.translate(va);
			all = all && translated && *translated == pa;
		}
		if (all)
			return levels;
	}
	return 0;
}

Status locate_kernel(const source::PhysicalMemory &memory, const KernelHints &hints, KernelImage &out)
{
	out = KernelImage{};
	VmcoreInfo info;
	Status status = find_vmcoreinfo(memory, info);
	if (!status.ok() && status.code != DOCA_ERROR_NOT_FOUND)
		return status; // the source cannot be read
	bool from_vmcoreinfo = status.ok();
	if (from_vmcoreinfo) {
		auto phys_base = info.phys_base();
		auto top = info.symbol("init_top_pgt");
		if (!top)
			top = info.symbol("swapper_pg_dir");
		if (!phys_base)
			return fail(DOCA_ERROR_INVALID_VALUE, "VMCOREINFO lacks NUMBER(phys_base)");
		out.release = info.osrelease;
		out.virtual_slide = *info.kernel_offset;
		out.phys_base = *phys_base;
		out.kpgd = hints.kpgd.value_or(out.image_pa(*top));
		out.method = "VMCOREINFO";
		std::pair<uint64_t, uint64_t> known[] = {{*top, out.image_pa(*top)}};
		int levels = detect_paging_depth(memory, out.kpgd, known);
		if (!levels)
			return fail(DOCA_ERROR_INVALID_VALUE,
				    "the kernel page table at " + hex(out.kpgd) +
					" does not map the kernel image (wrong kpgd, or the image is truncated?)");
		// Both depths can agree on a lucky address; VMCOREINFO or CR4 settle it.
		if (auto five = info.five_level())
			levels = *five ? 5 : 4;
		else if (memory.cpu_hints().cr4)
			levels = (*memory.cpu_hints().cr4 & cr4_la57) ? 5 : 4;
		out.levels = levels;
	} else if (!hints.symbols.empty()) {
		status = probe_banner(memory, hints, out);
		if (!status.ok())
			return status;
	} else {
		return fail(DOCA_ERROR_NOT_FOUND,
			    "not a memory image of a running Linux guest: no VMCOREINFO note in " +
				std::to_string(memory.total_bytes() >> 20) +
				" MiB of RAM (give a symbol map to locate the kernel another way)");
	}
	out.kernel_space = std::make_unique<paging::AddressSpace>(memory, out.kpgd, out.levels);

	if (from_vmcoreinfo) {
		status = decode_kallsyms_from_vmcoreinfo(info, *out.kernel_space, out.symbols);
		if (!status.ok() && hints.symbols.empty())
			return status;
	}
	// Symbols the caller supplies take precedence; System.map values move by the slide.
	uint64_t slide = hints.symbols_are_slid ? 0 : out.virtual_slide;
	for (const auto &[name, address] : hints.symbols)
		out.symbols.add(name, address + slide);
	if (!out.symbol("init_task"))
		return fail(DOCA_ERROR_NOT_FOUND, "no address for init_task (kallsyms or the symbol map)");

	if (!hints.btf.empty()) {
		status = Btf::parse(hints.btf, out.btf);
		if (!status.ok())
			return fail(status.code, "BTF from the symbol map: " + status.reason);
	} else {
		status = load_btf_from_memory(out, out.btf);
		if (!status.ok())
			return status;
	}
	return Status::success();
}

} // namespace softdpu::apsh::kernel
