// softdpu-exec-hash-build-map: hashes the executable pages of files into the attestation hash
// map that doca_apsh_attestation_get reads (format: src/apsh/api/exec_hash.hpp, docs/apsh.md).
//
//   softdpu-exec-hash-build-map [-o MAP] [--root DIR] PATH...
//
// PATH is a file or a directory (searched recursively for regular files). With --root, paths
// are recorded as the guest sees them: DIR is stripped (--root /mnt/guest: /mnt/guest/bin/sh
// is recorded as /bin/sh). ELF files contribute their executable segments; other files every
// page (e.g. a dump of a process's [vdso]).
#include "cli_errors.hpp"

#include <doca_error.h>
#include <softdpu/apsh.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// Adds one file; false when the tool must stop (a file that cannot be read). A file that is not a
// well-formed ELF file is reported and skipped.
bool add_file(const fs::path &path, const std::string &root, softdpu_apsh_exec_hash_map *map)
{
	std::string recorded = path.lexically_normal().string();
	if (!root.empty()) {
		// By path components: --root /tmp/r strips /tmp/r/bin/true, not /tmp/r2/bin/true.
		const fs::path inside = path.lexically_normal().lexically_relative(fs::path(root));
		if (!inside.empty() && *inside.begin() != ".." && inside != ".") {
			recorded.assign(1, '/'); // appended, not "/" + ...: GCC 12 -O3 misreports that (-Wrestrict)
			recorded += inside.string();
		}
	}
	const doca_error_t result = softdpu_apsh_exec_hash_map_add_file(map, path.c_str(), recorded.c_str());
	if (result == DOCA_SUCCESS)
		return true;
	const bool skipped = result == DOCA_ERROR_INVALID_VALUE;
	std::fprintf(stderr, "softdpu-exec-hash-build-map: %s%s\n", softdpu_apsh_exec_hash_map_get_error(map),
		     skipped ? " (skipped)" : "");
	return skipped;
}

// Owns the map for the length of the command.
struct MapOwner {
	softdpu_apsh_exec_hash_map *map = nullptr;
	MapOwner() = default;
	MapOwner(const MapOwner &) = delete;
	MapOwner &operator=(const MapOwner &) = delete;
	~MapOwner() { softdpu_apsh_exec_hash_map_destroy(map); }
};

} // namespace

static int run(int argc, char **argv)
{
	std::string output;
	std::string root;
	std::vector<std::string> inputs;
	CLI::App app{"Hashes (SHA-256, per 4 KiB page) the executable segments of ELF files, and every page of other "
		     "files, into a hash map for doca_apsh_attestation_get (default MAP: stdout).",
		     "softdpu-exec-hash-build-map"};
	app.set_version_flag("--version", "softdpu-exec-hash-build-map " SOFTDPU_VERSION);
	app.add_option("-o,--output", output, "write the map to MAP instead of stdout")->type_name("MAP");
	app.add_option("--root", root, "record paths as the guest sees them: DIR is stripped (by path components)")
	    ->type_name("DIR");
	app.add_option("path", inputs, "files, or directories searched recursively for regular files")
	    ->required()
	    ->type_name("PATH");
	if (int status = softdpu::cli::parse_command_line(app, argc, argv); status >= 0)
		return status;
	if (!root.empty()) {
		root = fs::path(root).lexically_normal().string();
		while (root.size() > 1 && root.back() == '/')
			root.pop_back();
	}
	MapOwner owner;
	if (softdpu_apsh_exec_hash_map_create(&owner.map) != DOCA_SUCCESS) {
		std::fprintf(stderr, "softdpu-exec-hash-build-map: out of memory\n");
		return 1;
	}
	softdpu_apsh_exec_hash_map *map = owner.map;
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
	const char *text_data = nullptr;
	size_t text_size = 0;
	uint32_t files = 0;
	if (softdpu_apsh_exec_hash_map_format(map, &text_data, &text_size) != DOCA_SUCCESS ||
	    softdpu_apsh_exec_hash_map_get_num_files(map, &files) != DOCA_SUCCESS) {
		std::fprintf(stderr, "softdpu-exec-hash-build-map: out of memory\n");
		return 1;
	}
	const std::string_view text(text_data, text_size);
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
	std::fprintf(stderr, "softdpu-exec-hash-build-map: %u files -> %s\n", files, output.c_str());
	return 0;
}

int main(int argc, char **argv)
{
	return softdpu::cli::run_main("softdpu-exec-hash-build-map", run, argc, argv);
}
