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

int main(int argc, char **argv)
{
	// Whatever escapes the command (running out of memory, a library error) ends it with a
	// message and status 1, never with std::terminate.
	try {
		return run(argc, argv);
	} catch (const std::exception &error) {
		std::fprintf(stderr, "softdpu-exec-hash-build-map: %s\n", error.what());
	} catch (...) {
		std::fprintf(stderr, "softdpu-exec-hash-build-map: unexpected error\n");
	}
	return 1;
}
