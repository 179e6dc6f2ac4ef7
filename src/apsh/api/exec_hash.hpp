// The attestation hash map: SHA-256 of every 4 KiB page of the executable segments of a set of
// files, written by softdpu-exec-hash-build-map and read by doca_apsh_attestation_get. Format
// (JSON, docs/apsh.md):
//   {"format": "softdpu-exec-hash-map", "version": 1, "page_size": 4096, "hash": "sha256",
//    "files": [{"path": "/bin/busybox", "size": 1234567, "elf": true,
//               "pages": [{"offset": 0, "sha256": "<64 hex>"}, ...]}]}
// "offset" is a page-aligned file offset; a page's hash covers the 4096 file bytes from there,
// zero-padded past the end of the file (what a file mapping shows in memory).
#pragma once

#include "apsh/api/sha256.hpp"
#include "apsh/introspection.hpp"

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace softdpu::apsh::api {

inline constexpr uint64_t kPageSize = 4096;
inline constexpr size_t kMaxHashMapFiles = 65536;

struct ExecHashFile {
	std::string path;
	uint64_t size = 0;
	bool elf = false;
	std::map<uint64_t, Sha256Digest> pages; // page-aligned file offset -> hash
};

struct ExecHashMap {
	std::vector<ExecHashFile> files;
	// The entry for a path: the same path, else the only entry with the same base name.
	const ExecHashFile *find(std::string_view path) const noexcept;
};

// Hash of one page: the bytes given (at most 4096), zero-padded to 4096.
Sha256Digest hash_page(std::span<const uint8_t> bytes) noexcept;

// Hashes the pages of a file's executable PT_LOAD segments (ELF64 little-endian), or every page
// of a file that is not ELF. Malformed ELF headers are errors naming the file.
Status hash_file_bytes(std::span<const uint8_t> bytes, const std::string &path, ExecHashFile &out);

// Reads the regular file `path` (at most 4 GiB) and adds its hashes to `map` under `recorded`:
// IO_FAILED when the file cannot be read, INVALID_VALUE for a malformed ELF file, FULL when the map
// has kMaxHashMapFiles files; `map` is unchanged on error.
Status add_file_to_exec_hash_map(const std::string &path, const std::string &recorded, ExecHashMap &map);

Status parse_exec_hash_map(std::string_view text, const std::string &name, ExecHashMap &out);
Status load_exec_hash_map(const std::string &path, ExecHashMap &out);
std::string format_exec_hash_map(const ExecHashMap &map);

} // namespace softdpu::apsh::api
