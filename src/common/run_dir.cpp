#include "common/run_dir.hpp"

#include "common/env.hpp"

#include <cerrno>
#include <sys/stat.h>
#include <unistd.h>

namespace softdpu::common {

std::string run_directory()
{
	if (const auto dir = env_value("SOFTDPU_RUN_DIR"))
		return std::string(*dir);
	if (const auto dir = env_value("XDG_RUNTIME_DIR"))
		return std::string(*dir) + "/softdpu";
	return "/tmp/softdpu-" + std::to_string(geteuid());
}

int make_run_directory(const std::string &path)
{
	if (path.empty())
		return ENOENT;
	// Each prefix ending before a '/', then the whole path.
	for (size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
		const std::string prefix = end == std::string::npos ? path : path.substr(0, end);
		if (!prefix.empty() && prefix.back() != '/' && mkdir(prefix.c_str(), 0700) != 0) {
			if (errno != EEXIST)
				return errno;
			struct stat st {};
			if (stat(prefix.c_str(), &st) != 0)
				return errno;
			if (!S_ISDIR(st.st_mode))
				return ENOTDIR;
		}
		if (end == std::string::npos)
			return 0;
	}
}

} // namespace softdpu::common
