// "softdpu apsh watch" against a running guest (tests/guest fixture start-vm --control: anonymous
// RAM, read through the QEMU process; a command channel into the guest). The test changes the guest
// through the channel (a process started and killed, a module unloaded and loaded, listening
// sockets, an executable page overwritten, a YARA marker, an injected RWX region) and checks that
// each change's event arrives within two intervals (--heartbeat's refresh lines tell which), and how
// --duration and SIGTERM end the stream. SOFTDPU_GUEST_WATCH_VM_RUN names the guest's run dir;
// without it the tests skip.
#include "guest_run_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr uint64_t kIntervalMs = 500;

uint64_t now_ns()
{
	return static_cast<uint64_t>(
	    std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
		.count());
}

std::string slurp(const fs::path &path)
{
	std::ifstream in(path, std::ios::binary);
	std::stringstream text;
	text << in.rdbuf();
	return text.str();
}

// The guest's command channel (boot --control): one shell command a line, answered by its stdout
// and "DONE <n> <status>".
class Control {
public:
	explicit Control(const std::string &socket_path)
	{
		fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		sockaddr_un address{};
		address.sun_family = AF_UNIX;
		std::snprintf(address.sun_path, sizeof(address.sun_path), "%s", socket_path.c_str());
		if (fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr *>(&address), sizeof(address)) != 0) {
			::close(fd_);
			fd_ = -1;
		}
		if (fd_ >= 0) {
			timeval timeout{60, 0};
			::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
		}
	}
	~Control()
	{
		if (fd_ >= 0)
			::close(fd_);
	}
	bool ok() const { return fd_ >= 0; }

	struct Answer {
		int status = -1;
		std::string out;
		uint64_t done_ns = 0; // when the answer arrived
	};

	Answer run(const std::string &command)
	{
		Answer answer;
		const std::string line = command + "\n";
		if (::send(fd_, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size()))
			return answer;
		for (;;) {
			const size_t done = buffer_.find("DONE ");
			if (done != std::string::npos && (done == 0 || buffer_[done - 1] == '\n')) {
				const size_t end = buffer_.find('\n', done);
				if (end != std::string::npos) {
					answer.out = buffer_.substr(0, done);
					std::istringstream words(buffer_.substr(done + 5, end - done - 5));
					unsigned n = 0;
					words >> n >> answer.status;
					buffer_.erase(0, end + 1);
					answer.done_ns = now_ns();
					return answer;
				}
			}
			char chunk[4096];
			const ssize_t got = ::recv(fd_, chunk, sizeof(chunk), 0);
			if (got <= 0)
				return answer;
			buffer_.append(chunk, static_cast<size_t>(got));
		}
	}

private:
	int fd_ = -1;
	std::string buffer_;
};

// softdpu apsh watch as a child process; its JSON lines are collected by a thread.
class Watcher {
public:
	explicit Watcher(const std::vector<std::string> &args)
	{
		int pipe_fds[2];
		if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
			return;
		pid_ = ::fork();
		if (pid_ == 0) {
			::dup2(pipe_fds[1], STDOUT_FILENO);
			std::vector<char *> argv;
			argv.push_back(const_cast<char *>(SOFTDPU_CLI));
			for (const std::string &arg : args)
				argv.push_back(const_cast<char *>(arg.c_str()));
			argv.push_back(nullptr);
			::execv(SOFTDPU_CLI, argv.data());
			::_exit(127);
		}
		::close(pipe_fds[1]);
		fd_ = pipe_fds[0];
		reader_ = std::thread([this] { read_lines(); });
	}
	~Watcher()
	{
		if (pid_ > 0 && status_ < 0)
			stop(SIGKILL);
		if (reader_.joinable())
			reader_.join();
		if (fd_ >= 0)
			::close(fd_);
	}

	// Sends the signal and returns the exit status (-1 when killed by a signal).
	int stop(int signal)
	{
		if (pid_ <= 0)
			return -1;
		::kill(pid_, signal);
		int status = 0;
		::waitpid(pid_, &status, 0);
		status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		if (reader_.joinable())
			reader_.join();
		return status_;
	}

	// The first event (from `from` on) for which match is true, waiting up to timeout_ms.
	std::optional<Json> wait_for(const std::function<bool(const Json &)> &match, uint64_t timeout_ms,
				     size_t from = 0)
	{
		const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
		do {
			{
				std::lock_guard lock(mutex_);
				for (size_t i = from; i < events_.size(); ++i)
					if (match(events_[i]))
						return events_[i];
			}
			std::this_thread::sleep_for(std::chrono::milliseconds(20));
		} while (std::chrono::steady_clock::now() < deadline);
		return std::nullopt;
	}

	std::vector<Json> events()
	{
		std::lock_guard lock(mutex_);
		return events_;
	}
	std::string bad_lines()
	{
		std::lock_guard lock(mutex_);
		return bad_lines_;
	}

private:
	void read_lines()
	{
		std::string pending;
		char chunk[4096];
		for (ssize_t got; (got = ::read(fd_, chunk, sizeof(chunk))) > 0;) {
			pending.append(chunk, static_cast<size_t>(got));
			for (size_t end; (end = pending.find('\n')) != std::string::npos;) {
				const std::string line = pending.substr(0, end);
				pending.erase(0, end + 1);
				std::lock_guard lock(mutex_);
				try {
					events_.push_back(Json::parse(line));
				} catch (const std::exception &) {
					bad_lines_ += line + "\n";
				}
			}
		}
	}

	pid_t pid_ = -1;
	int fd_ = -1;
	int status_ = -1;
	std::thread reader_;
	std::mutex mutex_;
	std::vector<Json> events_;
	std::string bad_lines_;
};

class ApshWatchVm : public ::testing::Test {
protected:
	void SetUp() override
	{
		::setenv("SOFTDPU_SIDE", "dpu", 1);
		::unsetenv("SOFTDPU_TOPOLOGY");
		::unsetenv("SOFTDPU_APSH_MEMORY");
		const char *dir = std::getenv("SOFTDPU_GUEST_WATCH_VM_RUN");
		if (dir == nullptr || !fs::exists(fs::path(dir) / "qemu.pid"))
			GTEST_SKIP() << "SOFTDPU_GUEST_WATCH_VM_RUN names no running guest (ctest's guest_watch_vm "
					"fixture sets it)";
		const softdpu::guest::GuestRunDir run(dir);
		name_ = run.value("QEMU_NAME");
		root_ = run.value("INITRAMFS_ROOT");
		control_socket_ = run.value("CONTROL_SOCKET");
		ASSERT_EQ(run.value("RAM_FILE"), "") << "the guest must run on anonymous RAM";
		ASSERT_FALSE(control_socket_.empty()) << "the guest was booted without --control";
		pid_ = run.pid();
	}

	std::string name_, root_, control_socket_, pid_;
};

uint32_t number(const std::string &text)
{
	return static_cast<uint32_t>(std::strtoul(text.c_str(), nullptr, 10));
}

// Events of this type for this pid.
std::function<bool(const Json &)> of(const std::string &type, uint32_t pid)
{
	return
	    [type, pid](const Json &event) { return event.value("type", "") == type && event.value("pid", 0u) == pid; };
}

TEST_F(ApshWatchVm, EveryChangeArrivesWithinTwoIntervals)
{
	const std::string tag = std::to_string(::getpid());
	const fs::path map = fs::temp_directory_path() / ("apsh_watch_vm_map." + tag + ".json");
	const fs::path rules = fs::temp_directory_path() / ("apsh_watch_vm_rules." + tag + ".yar");
	ASSERT_FALSE(root_.empty());
	const std::string build_map = std::string(SOFTDPU_EXEC_HASH_TOOL) + " --root '" + root_ + "' '" + root_ +
				      "/bin/apsh_target' -o '" + map.string() + "' >/dev/null 2>&1";
	ASSERT_EQ(std::system(build_map.c_str()), 0);
	std::ofstream(rules) << "rule watch_marker { strings: $a = \"APSH_WATCH_YARA_7d1e\" condition: $a }\n";

	Control control(control_socket_);
	ASSERT_TRUE(control.ok()) << control_socket_;
	// What an earlier run on this guest may have left (the fixture boots a fresh guest).
	ASSERT_EQ(control
		      .run("for p in $(ps -o pid,args | awk '/nc -l -p 797[9]|watch_targe[t]|sleep 636[3]/ "
			   "{print $1}'); do kill $p; done; sleep 0.3")
		      .status,
		  0);

	// Through the QEMU process by name; every kind of event.
	Watcher watcher({"apsh", "watch", "--memory", "qemu-name:" + name_, "--interval", std::to_string(kIntervalMs),
			 "--events", "all", "--hash-map", map.string(), "--rules", rules.string(), "--monotonic",
			 "--heartbeat"});
	const auto started =
	    watcher.wait_for([](const Json &e) { return e.value("type", "") == "watch-started"; }, 120000);
	ASSERT_TRUE(started) << watcher.bad_lines();
	EXPECT_EQ(started->at("interval_ms"), kIntervalMs);
	EXPECT_EQ(started->at("events").size(), 6u);

	// Within two intervals: the change is seen by the first or the second refresh that starts after
	// the command completed (or by an earlier one). --heartbeat puts a "refresh" line, with when it
	// started, after each refresh's events, so that is checked exactly, however long a refresh takes
	// on a loaded machine; the delay is reported too.
	const uint64_t wait_ms = 30000; // how long to wait at most
	auto is_refresh = [](const Json &e) { return e.value("type", "") == "refresh"; };
	auto expect_event = [&](const char *what, const Control::Answer &answer,
				const std::function<bool(const Json &)> &match) -> std::optional<Json> {
		auto event = watcher.wait_for(match, wait_ms);
		EXPECT_TRUE(event) << what << ": no event";
		if (!event)
			return std::nullopt;
		const uint64_t at = event->at("timestamp_ns").get<uint64_t>();
		const double delay_ms = (static_cast<double>(at) - static_cast<double>(answer.done_ns)) / 1e6;
		std::printf("%s: seen %.0f ms after the command\n", what, delay_ms);
		// The refresh line that follows the event names the refresh that saw it.
		const std::vector<Json> lines = watcher.events();
		size_t index = 0;
		while (index < lines.size() && !match(lines[index]))
			index++;
		const auto beat = watcher.wait_for(is_refresh, wait_ms, index + 1);
		EXPECT_TRUE(beat) << what << ": no refresh line after the event";
		if (!beat)
			return event;
		const std::vector<Json> with_beat = watcher.events();
		unsigned later_refreshes = 0; // refreshes that started after the command, up to this one
		for (size_t i = 0; i < with_beat.size(); i++) {
			if (is_refresh(with_beat[i]) && with_beat[i].at("started_ns").get<uint64_t>() >= answer.done_ns)
				later_refreshes++;
			if (i > index && is_refresh(with_beat[i]))
				break;
		}
		EXPECT_LE(later_refreshes, 2u)
		    << what << ": seen by refresh " << later_refreshes << " after the command (" << delay_ms
		    << " ms), not within two intervals: " << event->dump();
		return event;
	};

	// A process starts: with a listening socket and an RWX region holding code (an injection).
	const Control::Answer target =
	    control.run("rm -f /run/watch_target.info; env -i PATH=/bin /bin/apsh_target --comm watch_target --info "
			"/run/watch_target.info "
			"--tcp-port 7878 --patch-on-usr1 & while [ ! -e /run/watch_target.info ]; do sleep 0.05; "
			"done; sed -n 's/^pid=//p' /run/watch_target.info");
	ASSERT_EQ(target.status, 0);
	const uint32_t target_pid = number(target.out);
	ASSERT_GT(target_pid, 1u) << target.out;
	if (auto event = expect_event("process started", target, of("process-started", target_pid))) {
		EXPECT_GT(event->at("start_time_ns").get<uint64_t>(), 0u);
		EXPECT_FALSE(event->at("kernel_thread").get<bool>());
	}
	expect_event("listening socket", target, [&](const Json &e) {
		return e.value("type", "") == "socket-listening" && e.value("local_port", 0) == 7878 &&
		       e.value("protocol", "") == "tcp";
	});
	if (auto event = expect_event("injection", target, of("injection", target_pid))) {
		EXPECT_EQ(event->at("protection"), "rwx");
	}

	// It overwrites a byte of its own code: attestation fails.
	const Control::Answer patched = control.run("kill -USR1 " + std::to_string(target_pid));
	ASSERT_EQ(patched.status, 0);
	if (auto event = expect_event("attestation failure", patched, of("attestation-failure", target_pid))) {
		EXPECT_EQ(event->at("path"), "/bin/apsh_target");
		EXPECT_LT(event->at("matching_pages").get<uint64_t>(), event->at("pages_present").get<uint64_t>());
	}

	// A process with the YARA marker in its environment (its stack).
	const Control::Answer marked = control.run("env -i W=APSH_WATCH_YARA_7d1e sleep 6363 & echo $!");
	ASSERT_EQ(marked.status, 0);
	const uint32_t marked_pid = number(marked.out);
	if (auto event = expect_event("YARA match", marked, of("yara-match", marked_pid))) {
		EXPECT_EQ(event->at("rule"), "watch_marker");
	}

	// nc -l: another listening socket.
	const Control::Answer nc = control.run("nc -l -p 7979 -e /bin/cat & echo $!");
	ASSERT_EQ(nc.status, 0);
	const uint32_t nc_pid = number(nc.out);
	expect_event("nc process", nc, of("process-started", nc_pid));
	expect_event("nc socket", nc, [&](const Json &e) {
		return e.value("type", "") == "socket-listening" && e.value("local_port", 0) == 7979;
	});

	// The target is killed (pid 1 reaps it while the command sleeps): it exits, its socket closes.
	const Control::Answer killed = control.run("kill " + std::to_string(target_pid) + "; sleep 0.3");
	ASSERT_EQ(killed.status, 0);
	expect_event("process exited", killed, of("process-exited", target_pid));
	expect_event("socket closed", killed, [&](const Json &e) {
		return e.value("type", "") == "socket-closed" && e.value("local_port", 0) == 7878;
	});

	// The module goes and comes back (each seen before the next step).
	const Control::Answer removed = control.run("rmmod dummy");
	ASSERT_EQ(removed.status, 0);
	expect_event("module unloaded", removed, [](const Json &e) {
		return e.value("type", "") == "module-unloaded" && e.value("name", "") == "dummy";
	});
	const Control::Answer loaded = control.run("insmod /lib/modules/dummy.ko");
	ASSERT_EQ(loaded.status, 0);
	expect_event("module loaded", loaded, [](const Json &e) {
		return e.value("type", "") == "module-loaded" && e.value("name", "") == "dummy";
	});

	const Control::Answer cleanup =
	    control.run("kill " + std::to_string(marked_pid) + " " + std::to_string(nc_pid) + "; sleep 0.3");
	EXPECT_EQ(cleanup.status, 0);
	expect_event("marked process exited", cleanup, of("process-exited", marked_pid));

	// SIGINT ends the stream cleanly.
	EXPECT_EQ(watcher.stop(SIGINT), 0);
	const std::vector<Json> events = watcher.events();
	ASSERT_FALSE(events.empty());
	EXPECT_EQ(events.back().value("type", ""), "watch-stopped");
	EXPECT_EQ(events.back().value("reason", ""), "SIGINT");
	EXPECT_EQ(watcher.bad_lines(), "");
	// Identities are not reported twice while they last.
	size_t target_starts = 0;
	for (const Json &event : events)
		target_starts += of("process-started", target_pid)(event) ? 1 : 0;
	EXPECT_EQ(target_starts, 1u);
	fs::remove(map);
	fs::remove(rules);
}

TEST_F(ApshWatchVm, CountStopsThroughThePid)
{
	// --count: the baseline, then N refreshes; through pid: this time.
	Watcher watcher({"apsh", "watch", "--memory", "pid:" + pid_, "--interval", "100", "--count", "3"});
	const auto stopped =
	    watcher.wait_for([](const Json &e) { return e.value("type", "") == "watch-stopped"; }, 120000);
	ASSERT_TRUE(stopped);
	EXPECT_EQ(stopped->at("reason"), "count");
	EXPECT_EQ(watcher.stop(0), 0);
	EXPECT_EQ(watcher.events().front().value("type", ""), "watch-started");
}

TEST_F(ApshWatchVm, DurationStopsTheStream)
{
	// --duration: decimals allowed; the stream ends with reason "duration", exit status 0.
	Watcher watcher({"apsh", "watch", "--memory", "pid:" + pid_, "--interval", "100", "--duration", "0.3"});
	const auto stopped =
	    watcher.wait_for([](const Json &e) { return e.value("type", "") == "watch-stopped"; }, 120000);
	ASSERT_TRUE(stopped) << watcher.bad_lines();
	EXPECT_EQ(stopped->at("reason"), "duration");
	EXPECT_EQ(watcher.stop(0), 0);
	const std::vector<Json> events = watcher.events();
	ASSERT_GE(events.size(), 2u);
	EXPECT_EQ(events.front().value("type", ""), "watch-started");
	EXPECT_EQ(events.back().value("type", ""), "watch-stopped");
	// The duration counts from the baseline, which ends just before watch-started is printed.
	const double ran_ms =
	    (events.back().at("timestamp_ns").get<double>() - events.front().at("timestamp_ns").get<double>()) / 1e6;
	EXPECT_GE(ran_ms, 250.0) << "stopped " << ran_ms << " ms after watch-started";
	EXPECT_EQ(watcher.bad_lines(), "");
}

TEST_F(ApshWatchVm, SigtermStopsTheStreamCleanly)
{
	Watcher watcher({"apsh", "watch", "--memory", "pid:" + pid_, "--interval", "100"});
	ASSERT_TRUE(watcher.wait_for([](const Json &e) { return e.value("type", "") == "watch-started"; }, 120000))
	    << watcher.bad_lines();
	std::this_thread::sleep_for(std::chrono::milliseconds(300)); // a few refreshes
	EXPECT_EQ(watcher.stop(SIGTERM), 0);
	const std::vector<Json> events = watcher.events();
	ASSERT_FALSE(events.empty());
	EXPECT_EQ(events.back().value("type", ""), "watch-stopped");
	EXPECT_EQ(events.back().value("reason", ""), "SIGTERM");
	EXPECT_EQ(watcher.bad_lines(), "");
}

// Runs last (ctest DEPENDS): it ends the guest. The stream ends with an error event, exit status 1.
TEST_F(ApshWatchVm, GuestExitEndsTheStreamWithAnError)
{
	Watcher watcher({"apsh", "watch", "--memory", "qemu-name:" + name_, "--interval", "100"});
	ASSERT_TRUE(watcher.wait_for([](const Json &e) { return e.value("type", "") == "watch-started"; }, 120000));
	const pid_t qemu = static_cast<pid_t>(number(pid_));
	ASSERT_GT(qemu, 1);
	ASSERT_EQ(std::string(slurp("/proc/" + pid_ + "/comm")), "qemu-system-x86\n");
	ASSERT_EQ(::kill(qemu, SIGKILL), 0);
	const auto error = watcher.wait_for([](const Json &e) { return e.value("type", "") == "error"; }, 20000);
	ASSERT_TRUE(error) << "no error event after QEMU exited";
	EXPECT_NE(error->at("message").get<std::string>().find("exited"), std::string::npos) << error->dump();
	EXPECT_EQ(watcher.stop(0), 1);
	const std::vector<Json> events = watcher.events();
	EXPECT_EQ(events.back().value("type", ""), "error");
}

} // namespace
