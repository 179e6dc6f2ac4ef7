// App Shield API tests: a fake Linux guest injected through the API's opener seam, and a fixture
// that brings up the DOCA flow (DPU device, representor, context, system) against it.
#pragma once

#include "apsh/api/testing.hpp"
#include "device/topology.hpp"
#include "support/scoped_env.h"

#include <doca_apsh.h>
#include <doca_dev.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace apsh_test {

using namespace softdpu::apsh;

// A guest held in plain structures; user memory is a page map per pid.
struct FakeGuest {
	std::vector<Process> processes;
	std::map<uint32_t, std::vector<Thread>> threads;
	std::map<uint32_t, std::vector<Library>> libraries;
	std::map<uint32_t, std::vector<MemoryArea>> areas;
	std::vector<Module> modules;
	std::map<uint32_t, std::vector<EnvVar>> envars;
	std::map<uint32_t, ProcessParameters> parameters;
	std::vector<Connection> connections;
	std::map<uint32_t, std::vector<Injection>> injections;
	std::vector<Container> containers;
	std::map<std::pair<uint32_t, uint64_t>, std::vector<uint8_t>> pages; // (pid, page va) -> 4096 bytes
	Status fail;                                                         // returned by every query when not ok
	std::string fail_only; // ...or only by this query ("processes", "memory_areas", ...)
	// A reader that throws in this query ("processes", ..., "read_user_page"): std::bad_alloc, as
	// a reader running out of memory does, or another exception when throw_bad_alloc is false.
	std::string throw_in;
	bool throw_bad_alloc = true;
	int page_reads = 0;
	// Guest-physical frames (pid, page va) -> address, for readers that give them
	// (user_page_frames, read_frame); pages of the same frame share their bytes through share().
	// Empty: the reader cannot tell (LinuxSystem's defaults).
	std::map<std::pair<uint32_t, uint64_t>, uint64_t> frames;
	int frame_reads = 0;
	int batches = 0;      // begin_batch calls
	int open_batches = 0; // begin_batch less end_batch

	// Gives (pid, va) the frame `physical`, and the bytes of the page already at that frame.
	void share(uint32_t pid, uint64_t va, uint64_t physical)
	{
		for (const auto &[where, frame] : frames)
			if (frame == physical) {
				pages[{pid, va}] = pages[where];
				break;
			}
		frames[{pid, va}] = physical;
	}
	// Writes into every page mapping the frame of (pid, va), as a write to the frame would.
	void put_frame_bytes(uint32_t pid, uint64_t va, const void *data, size_t size)
	{
		const uint64_t physical = frames.at({pid, va & ~uint64_t{4095}});
		for (const auto &[where, frame] : frames)
			if (frame == physical)
				put_bytes(where.first, where.second + (va & 4095), data, size);
	}

	void put_bytes(uint32_t pid, uint64_t va, const void *data, size_t size)
	{
		const auto *bytes = static_cast<const uint8_t *>(data);
		for (size_t i = 0; i < size; ++i) {
			auto &page = pages[{pid, (va + i) & ~uint64_t{4095}}];
			page.resize(4096);
			page[(va + i) & 4095] = bytes[i];
		}
	}
	void put_zero_page(uint32_t pid, uint64_t va) { pages[{pid, va}].assign(4096, 0); }
};

class FakeSystem : public LinuxSystem {
public:
	explicit FakeSystem(std::shared_ptr<FakeGuest> guest) : guest_(std::move(guest)) {}

	Status check(const char *query) const
	{
		throw_if_asked(query);
		if (!guest_->fail.ok() && (guest_->fail_only.empty() || guest_->fail_only == query))
			return guest_->fail;
		return Status::success();
	}
	Status processes(std::vector<Process> &out) override
	{
		out = guest_->processes;
		return check("processes");
	}
	Status threads(const Process &p, std::vector<Thread> &out) override
	{
		out = guest_->threads[p.pid];
		return check("threads");
	}
	Status libraries(const Process &p, std::vector<Library> &out) override
	{
		out = guest_->libraries[p.pid];
		return check("libraries");
	}
	Status memory_areas(const Process &p, std::vector<MemoryArea> &out) override
	{
		out = guest_->areas[p.pid];
		return check("memory_areas");
	}
	Status modules(std::vector<Module> &out) override
	{
		out = guest_->modules;
		return check("modules");
	}
	Status envars(const Process &p, std::vector<EnvVar> &out) override
	{
		out = guest_->envars[p.pid];
		return check("envars");
	}
	Status parameters(const Process &p, ProcessParameters &out) override
	{
		out = guest_->parameters[p.pid];
		return check("parameters");
	}
	Status connections(std::vector<Connection> &out) override
	{
		out = guest_->connections;
		return check("connections");
	}
	Status injections(const Process &p, std::vector<Injection> &out) override
	{
		out = guest_->injections[p.pid];
		return check("injections");
	}
	Status containers(std::vector<Container> &out) override
	{
		out = guest_->containers;
		return check("containers");
	}
	bool read_user_page(const Process &p, uint64_t page_va, std::span<uint8_t, 4096> out) override
	{
		throw_if_asked("read_user_page");
		++guest_->page_reads;
		auto it = guest_->pages.find({p.pid, page_va});
		if (it == guest_->pages.end())
			return false;
		std::memcpy(out.data(), it->second.data(), 4096);
		return true;
	}
	bool user_page_frames(const Process &p, uint64_t page_va, std::span<uint64_t> physical) override
	{
		if (guest_->frames.empty())
			return false;
		for (size_t i = 0; i < physical.size(); ++i) {
			auto it = guest_->frames.find({p.pid, page_va + i * 4096});
			physical[i] = it == guest_->frames.end() || guest_->pages.count(it->first) == 0
					  ? kNoPhysicalAddress
					  : it->second;
		}
		return true;
	}
	void begin_batch() override
	{
		++guest_->batches;
		++guest_->open_batches;
	}
	void end_batch() override { --guest_->open_batches; }
	bool read_frame(uint64_t physical, std::span<uint8_t, 4096> out) override
	{
		for (const auto &[where, frame] : guest_->frames) {
			auto page = guest_->pages.find(where);
			if (frame != physical || page == guest_->pages.end())
				continue;
			++guest_->frame_reads;
			std::memcpy(out.data(), page->second.data(), 4096);
			return true;
		}
		return false;
	}
	size_t read_user(const Process &p, uint64_t va, std::span<uint8_t> out) override
	{
		size_t done = 0;
		std::array<uint8_t, 4096> page;
		while (done < out.size()) {
			const uint64_t at = va + done;
			if (!read_user_page(p, at & ~uint64_t{4095}, page))
				break;
			const size_t n = std::min<size_t>(4096 - (at & 4095), out.size() - done);
			std::memcpy(out.data() + done, page.data() + (at & 4095), n);
			done += n;
		}
		return done;
	}
	std::string describe() const override { return "fake guest"; }

private:
	void throw_if_asked(const char *query) const
	{
		if (guest_->throw_in != query)
			return;
		if (guest_->throw_bad_alloc)
			throw std::bad_alloc();
		throw std::runtime_error(std::string("fake reader failure in ") + query);
	}

	std::shared_ptr<FakeGuest> guest_;
};

inline std::shared_ptr<FakeGuest> sample_guest()
{
	auto guest = std::make_shared<FakeGuest>();
	Process init;
	init.task = 0xffff888000100000;
	init.pid = 1;
	init.ppid = 0;
	init.comm = "init";
	init.cpu_time_ns = 2500;
	init.uid = 0;
	init.gid = 0;
	init.state = 1;
	Process app = init;
	app.task = 0xffff888000200000;
	app.pid = 42;
	app.ppid = 1;
	app.comm = "marker_app";
	app.uid = 1000;
	app.gid = 100;
	app.state = 0;
	guest->processes = {init, app};
	guest->threads[42] = {{app.task, 42, 42, 0, "marker_app", "marker_app"},
			      {0x1, 42, 43, 1, "marker_app", "worker"}};
	guest->libraries[42] = {{42, "/lib/libc.so.6", 0x7f0000000000}};
	MemoryArea text{42, "marker_app", 0x400000, 0x402000, 0, 5, "/bin/marker_app", true};
	MemoryArea heap{42, "marker_app", 0x600000, 0x603000, 0, 3, "[heap]", false};
	MemoryArea rwx{42, "marker_app", 0x700000, 0x701000, 0, 7, "", false};
	guest->areas[42] = {text, heap, rwx};
	guest->modules = {{0xffffffffc0000000, "marker_mod", 16384}};
	guest->envars[42] = {{42, "MARKER", "yes"}, {42, "PATH", "/bin"}};
	guest->parameters[42] = {42, "marker_app --flag", "/bin/marker_app", 0x400000};
	Connection tcp;
	tcp.pid = 42;
	tcp.comm = "marker_app";
	tcp.protocol = 6;
	tcp.family = 2;
	tcp.local_addr = "10.0.2.15";
	tcp.remote_addr = "10.0.2.2";
	tcp.local_port = 4242;
	tcp.remote_port = 80;
	tcp.state = 1;
	Connection udp6 = tcp;
	udp6.protocol = 17;
	udp6.family = 10;
	udp6.local_addr = "::1";
	udp6.remote_addr = "::";
	udp6.state = 7;
	guest->connections = {tcp, udp6};
	Injection injection;
	injection.pid = 42;
	injection.area = rwx;
	injection.suspected_start = 0x700000;
	injection.suspected_end = 0x701000;
	guest->injections[42] = {injection};
	return guest;
}

using softdpu_test::ScopedEnv;

// The DPU view of the built-in topology, p0 open, hpf0 open, a started context, an unstarted
// system bound to hpf0, and a fake guest behind SOFTDPU_APSH_MEMORY.
class ApshApi : public ::testing::Test {
protected:
	void SetUp() override
	{
		auto topology = softdpu::device::Topology::builtin_default(softdpu::device::Side::dpu);
		ASSERT_TRUE(topology.topology) << topology.error;
		scoped_topology_ = std::make_unique<softdpu::device::testing::ScopedTopology>(topology.topology);
		guest_ = sample_guest();
		opener_ = std::make_unique<softdpu::apsh::api::testing::ScopedOpener>(
		    [this](const SourceSpec &source, const KernelHints &hints, const Limits &limits,
			   std::unique_ptr<LinuxSystem> &out) {
			    last_source_ = source;
			    last_hints_ = hints;
			    last_limits_ = limits;
			    ++opens_;
			    if (!open_status_.ok())
				    return open_status_;
			    out = std::make_unique<FakeSystem>(guest_);
			    return Status::success();
		    });
		ASSERT_EQ(doca_devinfo_create_list(&list_, &count_), DOCA_SUCCESS);
		for (uint32_t i = 0; i < count_ && dev_ == nullptr; ++i) {
			char ibdev[DOCA_DEVINFO_IBDEV_NAME_SIZE];
			ASSERT_EQ(doca_devinfo_get_ibdev_name(list_[i], ibdev, sizeof(ibdev)), DOCA_SUCCESS);
			if (std::strcmp(ibdev, "mlx5_0") == 0) {
				ASSERT_EQ(doca_dev_open(list_[i], &dev_), DOCA_SUCCESS);
			}
		}
		ASSERT_NE(dev_, nullptr);
		ASSERT_EQ(doca_devinfo_rep_create_list(dev_, DOCA_DEVINFO_REP_FILTER_NET, &reps_, &rep_count_),
			  DOCA_SUCCESS);
		ASSERT_GT(rep_count_, 0u);
		ASSERT_EQ(doca_dev_rep_open(reps_[0], &rep_), DOCA_SUCCESS);

		ctx_ = doca_apsh_create();
		ASSERT_NE(ctx_, nullptr);
		ASSERT_EQ(doca_apsh_dma_dev_set(ctx_, dev_), DOCA_SUCCESS);
		ASSERT_EQ(doca_apsh_start(ctx_), DOCA_SUCCESS);
		system_ = doca_apsh_system_create(ctx_);
		ASSERT_NE(system_, nullptr);
		ASSERT_EQ(doca_apsh_sys_os_type_set(system_, DOCA_APSH_SYSTEM_LINUX), DOCA_SUCCESS);
		ASSERT_EQ(doca_apsh_sys_dev_set(system_, rep_), DOCA_SUCCESS);
	}

	void TearDown() override
	{
		softdpu::apsh::api::testing::fail_next_allocations(0);
		softdpu::apsh::api::testing::fail_builtin_yara_rules(false);
		if (processes_ != nullptr)
			free_processes();
		if (system_ != nullptr)
			doca_apsh_system_destroy(system_);
		if (ctx_ != nullptr)
			doca_apsh_destroy(ctx_);
		if (rep_ != nullptr) {
			EXPECT_EQ(doca_dev_rep_close(rep_), DOCA_SUCCESS);
		}
		if (reps_ != nullptr) {
			EXPECT_EQ(doca_devinfo_rep_destroy_list(reps_), DOCA_SUCCESS);
		}
		if (dev_ != nullptr) {
			EXPECT_EQ(doca_dev_close(dev_), DOCA_SUCCESS);
		}
		if (list_ != nullptr) {
			EXPECT_EQ(doca_devinfo_destroy_list(list_), DOCA_SUCCESS);
		}
		EXPECT_EQ(softdpu::apsh::api::testing::live_snapshots(), live_at_start_);
	}

	void start() { ASSERT_EQ(doca_apsh_system_start(system_), DOCA_SUCCESS); }

	// Starts the system and returns the process with this pid (the array is kept in processes_).
	doca_apsh_process *process(uint32_t pid)
	{
		if (processes_ == nullptr) {
			EXPECT_EQ(doca_apsh_processes_get(system_, &processes_, &process_count_), DOCA_SUCCESS);
		}
		for (int i = 0; i < process_count_; ++i)
			if (doca_apsh_process_info_get(processes_[i], DOCA_APSH_PROCESS_PID) == pid)
				return processes_[i];
		return nullptr;
	}

	void free_processes()
	{
		doca_apsh_processes_free(processes_);
		processes_ = nullptr;
	}

	ScopedEnv memory_env_{"SOFTDPU_APSH_MEMORY", "raw:/fake/guest.img"};
	std::unique_ptr<softdpu::device::testing::ScopedTopology> scoped_topology_;
	std::unique_ptr<softdpu::apsh::api::testing::ScopedOpener> opener_;
	std::shared_ptr<FakeGuest> guest_;
	Status open_status_;
	SourceSpec last_source_;
	KernelHints last_hints_;
	Limits last_limits_;
	int opens_ = 0;
	size_t live_at_start_ = softdpu::apsh::api::testing::live_snapshots();

	doca_devinfo **list_ = nullptr;
	uint32_t count_ = 0;
	doca_dev *dev_ = nullptr;
	doca_devinfo_rep **reps_ = nullptr;
	uint32_t rep_count_ = 0;
	doca_dev_rep *rep_ = nullptr;
	doca_apsh_ctx *ctx_ = nullptr;
	doca_apsh_system *system_ = nullptr;
	doca_apsh_process **processes_ = nullptr;
	int process_count_ = 0;
};

// Writes a temporary file and removes it at scope exit.
class TempFile {
public:
	explicit TempFile(const std::string &content, const char *suffix = ".json")
	{
		path_ = std::string("/tmp/apsh_api_test_") + std::to_string(::getpid()) + "_" +
			std::to_string(counter()++) + suffix;
		FILE *file = std::fopen(path_.c_str(), "wb");
		if (file != nullptr) {
			std::fwrite(content.data(), 1, content.size(), file);
			std::fclose(file);
		}
	}
	~TempFile() { std::remove(path_.c_str()); }
	const char *path() const { return path_.c_str(); }

private:
	static int &counter()
	{
		static int value = 0;
		return value;
	}
	std::string path_;
};

} // namespace apsh_test
