// Replays fuzz inputs without libFuzzer: runs LLVMFuzzerTestOneInput on every regular file in
// each directory (or file) given on the command line. A crash or sanitizer report fails the run.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

bool replay_file(const std::filesystem::path &path)
{
	std::ifstream in(path, std::ios::binary);
	if (!in) {
		std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
		return false;
	}
	std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
	return true;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 2) {
		std::fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
		return 2;
	}
	size_t replayed = 0;
	for (int i = 1; i < argc; ++i) {
		std::filesystem::path root(argv[i]);
		std::error_code error;
		if (std::filesystem::is_regular_file(root, error)) {
			if (!replay_file(root))
				return 1;
			++replayed;
			continue;
		}
		if (!std::filesystem::is_directory(root, error)) {
			std::fprintf(stderr, "replay: %s is neither a file nor a directory\n", argv[i]);
			return 1;
		}
		for (const auto &entry : std::filesystem::recursive_directory_iterator(root)) {
			if (!entry.is_regular_file())
				continue;
			if (!replay_file(entry.path()))
				return 1;
			++replayed;
		}
	}
	if (replayed == 0) {
		std::fprintf(stderr, "replay: no inputs found\n");
		return 1;
	}
	std::printf("replayed %zu input(s)\n", replayed);
	return 0;
}
