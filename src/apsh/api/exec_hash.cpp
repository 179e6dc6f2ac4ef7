// The attestation hash map: see exec_hash.hpp and docs/apsh.md.
#include "apsh/api/exec_hash.hpp"

#include "apsh/api/config_files.hpp"
#include "common/json_object.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <elf.h>
#include <sys/stat.h>

namespace softdpu::apsh::api {

namespace {

using Json = nlohmann::json;

Status invalid(std::string reason)
{
	return {DOCA_ERROR_INVALID_VALUE, std::move(reason)};
}

// One of <elf.h>'s structures at `at` (the caller checks the bounds).
template <typename T> T read_struct(std::span<const uint8_t> bytes, size_t at) noexcept
{
	T value;
	std::memcpy(&value, bytes.data() + at, sizeof(T));
	return value;
}

std::string_view base_name(std::string_view path) noexcept
{
	const size_t slash = path.rfind('/');
	return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

} // namespace

const ExecHashFile *ExecHashMap::find(std::string_view path) const noexcept
{
	const ExecHashFile *by_name = nullptr;
	size_t same_name = 0;
	for (const ExecHashFile &file : files) {
		if (file.path == path)
			return &file;
		if (base_name(file.path) == base_name(path)) {
			by_name = &file;
			++same_name;
		}
	}
	return same_name == 1 ? by_name : nullptr;
}

Sha256Digest hash_page(std::span<const uint8_t> bytes) noexcept
{
	std::array<uint8_t, kPageSize> page{};
	const size_t n = std::min<size_t>(bytes.size(), kPageSize);
	std::memcpy(page.data(), bytes.data(), n);
	return sha256(page);
}

Status hash_file_bytes(std::span<const uint8_t> bytes, const std::string &path, ExecHashFile &out)
{
	out = {};
	out.path = path;
	out.size = bytes.size();
	auto hash_range = [&](uint64_t begin, uint64_t end) {
		for (uint64_t offset = begin & ~(kPageSize - 1); offset < end && offset < bytes.size();
		     offset += kPageSize)
			out.pages[offset] =
			    hash_page(bytes.subspan(offset, std::min<uint64_t>(kPageSize, bytes.size() - offset)));
	};
	if (bytes.size() < sizeof(Elf64_Ehdr) || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0) {
		hash_range(0, bytes.size());
		return Status::success();
	}
	out.elf = true;
	const auto header = read_struct<Elf64_Ehdr>(bytes, 0);
	if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB)
		return invalid(path + ": only 64-bit little-endian ELF files are supported");
	const uint64_t phoff = header.e_phoff;
	const uint16_t phentsize = header.e_phentsize;
	const uint16_t phnum = header.e_phnum;
	if (phnum == 0)
		return Status::success();
	if (phentsize < sizeof(Elf64_Phdr))
		return invalid(path + ": ELF program header entries too small (" + std::to_string(phentsize) +
			       " bytes)");
	if (phoff > bytes.size() || static_cast<uint64_t>(phnum) * phentsize > bytes.size() - phoff)
		return invalid(path + ": ELF program headers run past the end of the file");
	for (uint16_t i = 0; i < phnum; ++i) {
		const size_t at = phoff + static_cast<size_t>(i) * phentsize;
		const auto segment = read_struct<Elf64_Phdr>(bytes, at);
		const uint64_t offset = segment.p_offset;
		const uint64_t filesz = segment.p_filesz;
		if (segment.p_type != PT_LOAD || !(segment.p_flags & PF_X))
			continue;
		if (offset > bytes.size() || filesz > bytes.size() - offset)
			return invalid(path + ": executable segment " + std::to_string(i) +
				       " runs past the end of the file");
		hash_range(offset, offset + filesz);
	}
	return Status::success();
}

Status parse_exec_hash_map(std::string_view text, const std::string &name, ExecHashMap &out)
{
	if (softdpu::json::nesting_depth(text) > 16)
		return invalid(name + ": $: document nested too deeply");
	Json doc = Json::parse(text.begin(), text.end(), nullptr, false);
	const softdpu::json::DismantledOnExit dismantled(doc); // freed without allocating, out of memory included
	if (doc.is_discarded())
		return invalid(name + ": $: invalid JSON (not a hash map written by softdpu-exec-hash-build-map?)");
	// Strings are compared as strings: nlohmann's operator== with a const char * builds a JSON
	// string from it inside a noexcept function (out of memory there ends the process).
	const auto is_string = [&doc](const char *key, std::string_view value) {
		const auto it = doc.find(key);
		return it != doc.end() && it->is_string() && it->get_ref<const std::string &>() == value;
	};
	if (!doc.is_object() || !is_string("format", "softdpu-exec-hash-map"))
		return invalid(name + ": $.format: expected \"softdpu-exec-hash-map\"");
	if (doc.value("version", Json()) != 1)
		return invalid(name + ": $.version: expected 1");
	if (doc.contains("page_size") && doc.at("page_size") != kPageSize)
		return invalid(name + ": $.page_size: only 4096 is supported");
	if (doc.contains("hash") && !is_string("hash", "sha256"))
		return invalid(name + ": $.hash: only \"sha256\" is supported");
	if (!doc.contains("files") || !doc.at("files").is_array())
		return invalid(name + ": $.files: expected an array");
	const Json &files = doc.at("files");
	if (files.size() > kMaxHashMapFiles)
		return invalid(name + ": $.files: more than " + std::to_string(kMaxHashMapFiles) + " files");
	ExecHashMap parsed;
	for (size_t i = 0; i < files.size(); ++i) {
		const std::string path = name + ": $.files[" + std::to_string(i) + "]";
		const Json &file = files[i];
		if (!file.is_object() || !file.contains("path") || !file.at("path").is_string())
			return invalid(path + ".path: expected a string");
		if (!file.contains("pages") || !file.at("pages").is_array())
			return invalid(path + ".pages: expected an array");
		ExecHashFile entry;
		entry.path = file.at("path").get<std::string>();
		if (file.contains("size")) {
			if (!file.at("size").is_number_unsigned())
				return invalid(path + ".size: expected a non-negative integer");
			entry.size = file.at("size").get<uint64_t>();
		}
		if (file.contains("elf")) {
			if (!file.at("elf").is_boolean())
				return invalid(path + ".elf: expected true or false");
			entry.elf = file.at("elf").get<bool>();
		}
		const Json &pages = file.at("pages");
		for (size_t j = 0; j < pages.size(); ++j) {
			const std::string page_path = path + ".pages[" + std::to_string(j) + "]";
			const Json &page = pages[j];
			if (!page.is_object() || !page.contains("offset") || !page.at("offset").is_number_unsigned())
				return invalid(page_path + ".offset: expected a non-negative integer");
			const uint64_t offset = page.at("offset").get<uint64_t>();
			if (offset % kPageSize != 0)
				return invalid(page_path + ".offset: not a multiple of 4096");
			Sha256Digest digest;
			if (!page.contains("sha256") || !page.at("sha256").is_string() ||
			    !from_hex(page.at("sha256").get<std::string>(), digest))
				return invalid(page_path + ".sha256: expected 64 hex digits");
			entry.pages[offset] = digest;
		}
		parsed.files.push_back(std::move(entry));
	}
	out = std::move(parsed);
	return Status::success();
}

Status load_exec_hash_map(const std::string &path, ExecHashMap &out)
{
	std::string text;
	if (Status status = read_file(path, kMaxConfigFileBytes, text); !status.ok())
		return status;
	return parse_exec_hash_map(text, path, out);
}

Sha256Digest PageDigestCache::hash(uint64_t physical, std::span<const uint8_t, kPageSize> page)
{
	auto it = entries_.find(physical);
	if (it != entries_.end() && std::memcmp(it->second->bytes.data(), page.data(), kPageSize) == 0)
		return it->second->digest;
	const Sha256Digest digest = hash_page(page);
	if (it == entries_.end()) {
		if (entries_.size() >= kMaxPages)
			entries_.clear();
		it = entries_.emplace(physical, std::make_unique<Entry>()).first;
	}
	std::memcpy(it->second->bytes.data(), page.data(), kPageSize);
	it->second->digest = digest;
	return digest;
}

Status ExecHashMapCache::get(const std::string &path, std::shared_ptr<const ExecHashMap> &out)
{
	struct stat st {};
	Identity identity;
	// Identified before reading: a file changed meanwhile differs at the next call and is read again.
	if (::stat(path.c_str(), &st) == 0)
		identity = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
			    static_cast<uint64_t>(st.st_size), st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
	{
		std::lock_guard lock(mutex_);
		if (map_ && path_ == path && identity_ == identity && identity.inode != 0) {
			out = map_;
			return Status::success();
		}
	}
	auto map = std::make_shared<ExecHashMap>();
	if (Status status = load_exec_hash_map(path, *map); !status.ok())
		return status;
	std::lock_guard lock(mutex_);
	path_ = path;
	identity_ = identity;
	map_ = map;
	out = std::move(map);
	return Status::success();
}

Status add_file_to_exec_hash_map(const std::string &path, const std::string &recorded, ExecHashMap &map)
{
	if (map.files.size() >= kMaxHashMapFiles)
		return Status{DOCA_ERROR_FULL, "the map has " + std::to_string(kMaxHashMapFiles) + " files already"};
	std::string bytes;
	if (Status status = read_file(path, size_t{1} << 32, bytes); !status.ok())
		return Status{DOCA_ERROR_IO_FAILED, status.reason};
	ExecHashFile file;
	if (Status status = hash_file_bytes(std::span(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()),
					    recorded, file);
	    !status.ok())
		return status;
	map.files.push_back(std::move(file));
	return Status::success();
}

std::string format_exec_hash_map(const ExecHashMap &map)
{
	Json files = Json::array();
	for (const ExecHashFile &file : map.files) {
		Json pages = Json::array();
		for (const auto &[offset, digest] : file.pages)
			pages.push_back({{"offset", offset}, {"sha256", to_hex(digest)}});
		files.push_back(
		    {{"path", file.path}, {"size", file.size}, {"elf", file.elf}, {"pages", std::move(pages)}});
	}
	Json doc = {{"format", "softdpu-exec-hash-map"},
		    {"version", 1},
		    {"page_size", kPageSize},
		    {"hash", "sha256"},
		    {"files", std::move(files)}};
	return doc.dump(1) + "\n";
}

} // namespace softdpu::apsh::api
