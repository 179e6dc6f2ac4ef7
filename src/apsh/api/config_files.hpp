// App Shield configuration files (formats: docs/apsh.md): the OS symbol map, the memory regions
// and the kpgd file, parsed into the reader's KernelHints and RamRanges. Every error names the
// file, the field and the reason: "symbols.json: $.symbols.init_task: expected an address".
#pragma once

#include "apsh/introspection.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace softdpu::apsh::api {

// Largest configuration file read (symbol maps of a full kernel are a few MiB).
inline constexpr size_t kMaxConfigFileBytes = 256u << 20;
// A memory-regions file holds at most kMaxRamRanges regions (about 100 bytes each in JSON).
inline constexpr size_t kMaxMemRegionsFileBytes = 4u << 20;
inline constexpr size_t kMaxKpgdFileBytes = 4096;
inline constexpr size_t kMaxBtfBytes = 64u << 20;
inline constexpr size_t kMaxRamRanges = 4096;

// A symbol map: our compact JSON map or a Volatility 3 ISF (addresses only). Empty text or "{}"
// means "derive from memory" and leaves hints untouched. base_dir resolves a relative "btf".
Status parse_symbol_map(std::string_view text, const std::string &name, const std::string &base_dir,
			KernelHints &hints);
// NVIDIA's mem_regions.json ({"allowed_regions": ...}) or our {"ranges": [...]} triples. Empty
// text or "{}" means "derive from the source" and leaves ranges empty.
Status parse_mem_regions(std::string_view text, const std::string &name, std::vector<RamRange> &ranges);
// Line 1: physical address of the kernel's top page table (hex, optional 0x). Optional line 2:
// init_task's virtual address (hex), added to the hints as a slid symbol.
Status parse_kpgd_file(std::string_view text, const std::string &name, KernelHints &hints);

// The same, reading the files (errors for missing or oversized files name the path).
Status load_symbol_map(const std::string &path, KernelHints &hints);
Status load_mem_regions(const std::string &path, std::vector<RamRange> &ranges);
Status load_kpgd_file(const std::string &path, KernelHints &hints);

// Reads a whole regular file of at most max_bytes: anything else (a FIFO, a device, a directory)
// is refused before it is opened. INVALID_VALUE with a reason naming the file otherwise.
Status read_file(const std::string &path, size_t max_bytes, std::string &out);

} // namespace softdpu::apsh::api
