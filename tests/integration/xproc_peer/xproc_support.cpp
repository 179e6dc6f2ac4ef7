#include "xproc_peer/xproc_support.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <thread>

namespace xproc_test {

namespace {
void check(doca_error_t result, const char *what)
{
	if (result != DOCA_SUCCESS)
		throw std::runtime_error(std::string(what) + ": " + doca_error_get_name(result));
}

void on_done(doca_dma_task_memcpy *task, union doca_data, union doca_data ctx_user_data)
{
	auto *rig = static_cast<DmaRig *>(ctx_user_data.ptr);
	rig->completed++;
	rig->last_status = doca_task_get_status(doca_dma_task_memcpy_as_task(task));
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}

void on_error(doca_dma_task_memcpy *task, union doca_data, union doca_data ctx_user_data)
{
	auto *rig = static_cast<DmaRig *>(ctx_user_data.ptr);
	rig->completed++;
	rig->failed++;
	rig->last_status = doca_task_get_status(doca_dma_task_memcpy_as_task(task));
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}
} // namespace

std::string to_hex(const void *data, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	std::string out;
	out.reserve(len * 2);
	const auto *p = static_cast<const uint8_t *>(data);
	for (size_t i = 0; i < len; ++i) {
		out.push_back(digits[p[i] >> 4]);
		out.push_back(digits[p[i] & 15]);
	}
	return out;
}

std::vector<uint8_t> from_hex(const std::string &hex)
{
	std::vector<uint8_t> out;
	for (size_t i = 0; i + 1 < hex.size(); i += 2)
		out.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
	return out;
}

void fill_pattern(uint8_t *p, size_t len, uint32_t seed, size_t first_index)
{
	for (size_t i = 0; i < len; ++i)
		p[i] = pattern_byte(seed, first_index + i);
}

bool check_pattern(const uint8_t *p, size_t len, uint32_t seed, size_t first_index)
{
	for (size_t i = 0; i < len; ++i)
		if (p[i] != pattern_byte(seed, first_index + i))
			return false;
	return true;
}

uint64_t fnv(const uint8_t *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; ++i) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

DmaRig::DmaRig(doca_dev *device, uint32_t num_tasks, uint32_t num_bufs) : dev(device)
{
	check(doca_pe_create(&pe), "doca_pe_create");
	check(doca_dma_create(dev, &dma), "doca_dma_create");
	check(doca_pe_connect_ctx(pe, doca_dma_as_ctx(dma)), "doca_pe_connect_ctx");
	check(doca_dma_task_memcpy_set_conf(dma, on_done, on_error, num_tasks), "set_conf");
	union doca_data self;
	self.ptr = this;
	check(doca_ctx_set_user_data(doca_dma_as_ctx(dma), self), "doca_ctx_set_user_data");
	check(doca_ctx_start(doca_dma_as_ctx(dma)), "doca_ctx_start");
	check(doca_buf_inventory_create(num_bufs, &inventory), "doca_buf_inventory_create");
	check(doca_buf_inventory_start(inventory), "doca_buf_inventory_start");
}

DmaRig::~DmaRig()
{
	doca_ctx *ctx = doca_dma_as_ctx(dma);
	enum doca_ctx_states state;
	doca_ctx_get_state(ctx, &state);
	if (state == DOCA_CTX_STATE_RUNNING)
		doca_ctx_stop(ctx);
	for (int i = 0; i < 10'000'000; ++i) {
		doca_ctx_get_state(ctx, &state);
		if (state == DOCA_CTX_STATE_IDLE)
			break;
		doca_pe_progress(pe);
	}
	doca_dma_destroy(dma);
	doca_pe_destroy(pe);
	doca_buf_inventory_stop(inventory);
	doca_buf_inventory_destroy(inventory);
}

doca_buf *DmaRig::buf(doca_mmap *mmap, void *addr, size_t len, size_t data_len)
{
	doca_buf *out = nullptr;
	check(doca_buf_inventory_buf_get_by_args(inventory, mmap, addr, len, addr, data_len, &out), "buf_get_by_args");
	return out;
}

void DmaRig::progress_until_done(uint32_t count)
{
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
	while (completed < count && std::chrono::steady_clock::now() < deadline)
		doca_pe_progress(pe);
}

doca_error_t DmaRig::copy(doca_buf *src, doca_buf *dst)
{
	doca_dma_task_memcpy *task = nullptr;
	union doca_data user;
	user.u64 = 0;
	const doca_error_t alloc = doca_dma_task_memcpy_alloc_init(dma, src, dst, user, &task);
	if (alloc != DOCA_SUCCESS)
		return alloc;
	const uint32_t target = completed + 1;
	const doca_error_t submitted = doca_task_submit(doca_dma_task_memcpy_as_task(task));
	if (submitted != DOCA_SUCCESS) {
		doca_task_free(doca_dma_task_memcpy_as_task(task));
		return submitted;
	}
	progress_until_done(target);
	return completed >= target ? last_status : DOCA_ERROR_TIME_OUT;
}

void DmaRig::restart()
{
	doca_ctx *ctx = doca_dma_as_ctx(dma);
	enum doca_ctx_states state;
	for (int i = 0; i < 10'000'000; ++i) {
		doca_ctx_get_state(ctx, &state);
		if (state == DOCA_CTX_STATE_IDLE)
			break;
		if (state == DOCA_CTX_STATE_RUNNING)
			doca_ctx_stop(ctx);
		doca_pe_progress(pe);
	}
	check(doca_ctx_start(ctx), "doca_ctx_start (restart)");
}

Peer::Peer(const std::string &program, const std::vector<std::string> &args, const std::vector<std::string> &env)
{
	int in[2], out[2];
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
		throw std::runtime_error("pipe2");
	std::vector<std::string> argv_s{program};
	argv_s.insert(argv_s.end(), args.begin(), args.end());
	std::vector<char *> argv;
	for (auto &a : argv_s)
		argv.push_back(a.data());
	argv.push_back(nullptr);
	std::vector<std::string> env_s;
	for (char **e = environ; *e != nullptr; ++e) {
		const std::string entry(*e);
		bool overridden = false;
		for (const std::string &add : env)
			overridden |= entry.compare(0, add.find('=') + 1, add, 0, add.find('=') + 1) == 0;
		if (!overridden)
			env_s.push_back(entry);
	}
	env_s.insert(env_s.end(), env.begin(), env.end());
	std::vector<char *> envp;
	for (auto &e : env_s)
		envp.push_back(e.data());
	envp.push_back(nullptr);
	pid_ = fork();
	if (pid_ < 0)
		throw std::runtime_error("fork");
	if (pid_ == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execve(program.c_str(), argv.data(), envp.data());
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	to_child_ = in[1];
	from_child_ = out[0];
}

Peer::~Peer()
{
	if (to_child_ >= 0)
		close(to_child_); // EOF: the peer exits
	if (!reaped_ && wait(5000) == -1) {
		kill9();
		wait(5000);
	}
	if (from_child_ >= 0)
		close(from_child_);
}

void Peer::send(const std::string &line)
{
	const std::string text = line + "\n";
	size_t done = 0;
	while (done < text.size()) {
		const ssize_t n = write(to_child_, text.data() + done, text.size() - done);
		if (n <= 0)
			return;
		done += static_cast<size_t>(n);
	}
}

std::string Peer::read_line(int timeout_ms)
{
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
	for (;;) {
		const size_t nl = buffered_.find('\n');
		if (nl != std::string::npos) {
			std::string line = buffered_.substr(0, nl);
			buffered_.erase(0, nl + 1);
			return line;
		}
		const auto left =
		    std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
		if (left.count() <= 0)
			return "";
		struct pollfd pfd = {from_child_, POLLIN, 0};
		if (poll(&pfd, 1, static_cast<int>(left.count())) <= 0)
			continue;
		char chunk[4096];
		const ssize_t n = read(from_child_, chunk, sizeof(chunk));
		if (n <= 0)
			return "";
		buffered_.append(chunk, static_cast<size_t>(n));
	}
}

std::string Peer::call(const std::string &line, int timeout_ms)
{
	send(line);
	return read_line(timeout_ms);
}

void Peer::kill9()
{
	if (pid_ > 0 && !reaped_)
		::kill(pid_, SIGKILL);
}

int Peer::wait(int timeout_ms)
{
	if (reaped_)
		return 0;
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
	for (;;) {
		int status = 0;
		const pid_t r = waitpid(pid_, &status, WNOHANG);
		if (r == pid_) {
			reaped_ = true;
			return status;
		}
		if (std::chrono::steady_clock::now() >= deadline)
			return -1;
		std::this_thread::sleep_for(std::chrono::milliseconds(2));
	}
}

std::vector<std::string> words(const std::string &line)
{
	std::istringstream in(line);
	std::vector<std::string> out;
	for (std::string w; in >> w;)
		out.push_back(w);
	return out;
}

size_t open_fd_count()
{
	size_t n = 0;
	DIR *dir = opendir("/proc/self/fd");
	if (dir == nullptr)
		return 0;
	while (readdir(dir) != nullptr)
		++n;
	closedir(dir);
	return n;
}

std::vector<std::string> dev_shm_entries()
{
	std::vector<std::string> out;
	DIR *dir = opendir("/dev/shm");
	if (dir == nullptr)
		return out;
	while (const dirent *e = readdir(dir)) {
		const std::string_view name = e->d_name;
		// softdpu-guest-*: the test guests' RAM (tests/guest/boot), not the library's.
		if ((name.starts_with("softdpu") && !name.starts_with("softdpu-guest-")) || name.starts_with("doca"))
			out.emplace_back(name);
	}
	closedir(dir);
	std::sort(out.begin(), out.end());
	return out;
}

} // namespace xproc_test
