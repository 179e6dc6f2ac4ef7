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

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
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

// SHA-256 of pages by guest-physical frame: attesting every process hashes the same shared
// library pages once per process. An entry keeps the page's bytes and is used only when the page
// read now is byte for byte the same (a frame reused for other contents is hashed afresh), so the
// result is exactly hash_page's. At most kMaxPages entries (then it starts over). Not thread-safe.
class PageDigestCache {
public:
	static constexpr size_t kMaxPages = 2048; // 8 MiB of page copies

	Sha256Digest hash(uint64_t physical, std::span<const uint8_t, kPageSize> page);

private:
	struct Entry {
		std::array<uint8_t, kPageSize> bytes;
		Sha256Digest digest;
	};
	std::unordered_map<uint64_t, std::unique_ptr<Entry>> entries_;
};

// The last map loaded, kept while its file stays the same (device, inode, size and modification
// time): attesting every process of a guest passes the same path once per process, and parsing a
// map of a few files takes longer than attesting a process. Thread-safe.
class ExecHashMapCache {
public:
	// load_exec_hash_map's result for `path`, parsed again only when the file changed.
	Status get(const std::string &path, std::shared_ptr<const ExecHashMap> &out);

private:
	struct Identity {
		uint64_t device = 0, inode = 0, size = 0;
		int64_t mtime_sec = 0, mtime_nsec = 0;
		bool operator==(const Identity &) const = default;
	};
	std::mutex mutex_;
	std::string path_;
	Identity identity_;
	std::shared_ptr<const ExecHashMap> map_;
};

} // namespace softdpu::apsh::api
