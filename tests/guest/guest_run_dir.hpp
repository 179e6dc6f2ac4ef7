// A test guest's run dir as tests/guest/boot leaves it (and tests/guest/snapshot copies its guest.env):
// guest.env (what was booted, as KEY=value lines) and qemu.pid. Shared by the tests that read a
// running guest or a snapshot of one (tests/apsh_cli, tests/guest/scale_test.cpp).
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace softdpu::guest {

class GuestRunDir {
public:
	// Reads dir/guest.env and dir/qemu.pid; a file that is missing reads as empty.
	explicit GuestRunDir(const std::filesystem::path &dir)
	{
		std::ifstream env(dir / "guest.env");
		for (std::string line; std::getline(env, line);)
			if (const size_t eq = line.find('='); eq != std::string::npos)
				env_[line.substr(0, eq)] = line.substr(eq + 1);
		std::ifstream pid(dir / "qemu.pid");
		std::stringstream text;
		text << pid.rdbuf();
		pid_ = text.str();
		while (!pid_.empty() && (pid_.back() == '\n' || pid_.back() == ' '))
			pid_.pop_back();
	}

	// guest.env's value of `key` ("QEMU_NAME", "QMP_SOCKET", "INITRAMFS_ROOT", ...); "" when absent.
	std::string value(const std::string &key) const
	{
		const auto found = env_.find(key);
		return found == env_.end() ? std::string() : found->second;
	}
	// QEMU's pid (qemu.pid, without its newline); "" in a snapshot, which has none.
	const std::string &pid() const { return pid_; }

private:
	std::map<std::string, std::string> env_;
	std::string pid_;
};

} // namespace softdpu::guest
