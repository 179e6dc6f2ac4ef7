// softdpu-exec-hash-build-map: hashes the executable pages of files into the attestation hash
// map that doca_apsh_attestation_get reads (format: src/apsh/api/exec_hash.hpp, docs/apsh.md).
//
//   softdpu-exec-hash-build-map [-o MAP] [--root DIR] PATH...
//
// PATH is a file or a directory (searched recursively for regular files). With --root, paths
// are recorded as the guest sees them: DIR is stripped (--root /mnt/guest: /mnt/guest/bin/sh
// is recorded as /bin/sh). ELF files contribute their executable segments; other files every
// page (e.g. a dump of a process's [vdso]).
#include "apsh/api/config_files.hpp"
#include "apsh/api/exec_hash.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace softdpu::apsh::api;

namespace {

int usage(FILE *out)
{
	std::fprintf(out, "usage: softdpu-exec-hash-build-map [-o MAP] [--root DIR] PATH...\n"
			  "Hashes (SHA-256, per 4 KiB page) the executable segments of ELF files, and every page\n"
			  "of other files, into a hash map for doca_apsh_attestation_get (default MAP: stdout).\n");
	return out == stdout ? 0 : 2;
}

bool add_file(const fs::path &path, const std::string &root, ExecHashMap &map)
{
	std::string bytes;
	if (softdpu::apsh::Status status = read_file(path.string(), 1ull << 32, bytes); !status.ok()) {
		std::fprintf(stderr, "softdpu-exec-hash-build-map: %s\n", status.reason.c_str());
		return false;
	}
	std::string recorded = path.lexically_normal().string();
	if (!root.empty()) {
		// By path components: --root /tmp/r strips /tmp/r/bin/true, not /tmp/r2/bin/true.
		const fs::path inside = path.lexically_normal().lexically_relative(fs::path(root));
		if (!inside.empty() && *inside.begin() != ".." && inside != ".") {
			recorded.assign(1, '/'); // appended, not "/" + ...: GCC 12 -O3 misreports that (-Wrestrict)
			recorded += inside.string();
		}
	}
	ExecHashFile file;
	softdpu::apsh::Status status =
	    hash_file_bytes(std::span(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()), recorded, file);
	if (!status.ok()) {
		std::fprintf(stderr, "softdpu-exec-hash-build-map: %s (skipped)\n", status.reason.c_str());
		return true;
	}
	map.files.push_back(std::move(file));
	return true;
}

} // namespace

int main(int argc, char **argv)
{
	std::string output;
	std::string root;
	std::vector<std::string> inputs;
	for (int i = 1; i < argc; ++i) {
		const std::string arg = argv[i];
		if (arg == "-h" || arg == "--help")
			return usage(stdout);
		if ((arg == "-o" || arg == "--output") && i + 1 < argc) {
			output = argv[++i];
		} else if (arg == "--root" && i + 1 < argc) {
			root = fs::path(argv[++i]).lexically_normal().string();
			while (root.size() > 1 && root.back() == '/')
				root.pop_back();
		} else if (!arg.empty() && arg[0] == '-') {
			std::fprintf(stderr, "softdpu-exec-hash-build-map: unknown option %s\n", arg.c_str());
			return usage(stderr);
		} else {
			inputs.push_back(arg);
		}
	}
	if (inputs.empty())
		return usage(stderr);
	ExecHashMap map;
	for (const std::string &input : inputs) {
		std::error_code error;
		if (fs::is_directory(input, error)) {
			for (auto it = fs::recursive_directory_iterator(
				 input, fs::directory_options::skip_permission_denied, error);
			     it != fs::recursive_directory_iterator(); it.increment(error)) {
				if (error)
					break;
				if (it->is_regular_file(error) && !it->is_symlink(error))
					if (!add_file(it->path(), root, map))
						return 1;
			}
		} else if (!add_file(input, root, map)) {
			return 1;
		}
	}
	const std::string text = format_exec_hash_map(map);
	if (output.empty()) {
		std::fwrite(text.data(), 1, text.size(), stdout);
		return 0;
	}
	std::ofstream out(output, std::ios::binary);
	if (!out || !out.write(text.data(), static_cast<std::streamsize>(text.size()))) {
		std::fprintf(stderr, "softdpu-exec-hash-build-map: cannot write %s: %s\n", output.c_str(),
			     std::strerror(errno));
		return 1;
	}
	std::fprintf(stderr, "softdpu-exec-hash-build-map: %zu files -> %s\n", map.files.size(), output.c_str());
	return 0;
}
