// The ground-truth parser on a real capture (tests/guest/data/ground-truth-4level.txt, written
// by a 4-level guest). The capture holds the same facts twice, from independent sources: what the
// test programs wrote about themselves (their info files) and what procfs says. The parser must
// make them agree.
#include "ground_truth.hpp"

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <fstream>
#include <sstream>

using softdpu::guest::GroundTruth;
using softdpu::guest::GtMapping;
using softdpu::guest::GtSocket;

namespace {

const std::string kSample = std::string(SOFTDPU_GUEST_DATA_DIR) + "/ground-truth-4level.txt";

std::string read_sample()
{
	std::ifstream in(kSample, std::ios::binary);
	std::stringstream text;
	text << in.rdbuf();
	return text.str();
}

class GroundTruthSample : public ::testing::Test {
protected:
	static void SetUpTestSuite() { gt_ = new GroundTruth(GroundTruth::load(kSample)); }
	static void TearDownTestSuite() { delete gt_; }
	static GroundTruth *gt_;
};
GroundTruth *GroundTruthSample::gt_ = nullptr;

const GtMapping *mapping_at(const std::vector<GtMapping> &maps, uint64_t start)
{
	for (const auto &m : maps)
		if (m.start == start)
			return &m;
	return nullptr;
}

} // namespace

TEST_F(GroundTruthSample, KernelAndCommandLine)
{
	EXPECT_EQ(gt_->kernel_release, "6.1.0-56-amd64");
	EXPECT_NE(gt_->cmdline.find("console=ttyS0"), std::string::npos);
}

TEST_F(GroundTruthSample, TargetsAgreeWithProcfsOnProcessesAndThreads)
{
	ASSERT_EQ(gt_->targets.size(), 2u);
	EXPECT_EQ(gt_->target("apsh_static")->fields.count("uid"), 1u) << "the static target runs as uid 1000";
	for (const char *comm : {"apsh_target", "apsh_static"}) {
		SCOPED_TRACE(comm);
		const auto *target = gt_->target(comm);
		ASSERT_NE(target, nullptr);
		const auto *proc = gt_->process(target->pid);
		ASSERT_NE(proc, nullptr);
		EXPECT_EQ(proc->comm, comm);
		EXPECT_EQ(proc->ppid, 1u);
		EXPECT_FALSE(proc->kernel_thread);
		EXPECT_FALSE(proc->transient);
		// A target that dropped root says so in its info file; procfs must show the same ids.
		auto uid = target->fields.find("uid"), gid = target->fields.find("gid");
		EXPECT_EQ(proc->uid, uid == target->fields.end() ? 0u : std::stoul(uid->second));
		EXPECT_EQ(proc->gid, gid == target->fields.end() ? 0u : std::stoul(gid->second));
		// The info file's thread list is procfs's task list minus the main thread.
		auto threads = gt_->threads_of(target->pid);
		ASSERT_EQ(threads.size(), target->threads.size() + 1);
		EXPECT_EQ(threads[0].tid, target->pid);
		EXPECT_EQ(threads[0].comm, comm);
		for (const auto &[tid, name] : target->threads) {
			auto it = std::find_if(threads.begin(), threads.end(),
					       [wanted = tid](const auto &t) { return t.tid == wanted; });
			ASSERT_NE(it, threads.end()) << "tid " << tid;
			EXPECT_EQ(it->comm, name);
		}
	}
}

TEST_F(GroundTruthSample, ArgvAndEnvironment)
{
	const auto *target = gt_->target("apsh_target");
	ASSERT_NE(target, nullptr);
	const auto *proc = gt_->process(target->pid);
	ASSERT_NE(proc, nullptr);
	EXPECT_EQ(proc->exe, "/bin/apsh_target");
	ASSERT_GE(proc->argv.size(), 4u);
	EXPECT_EQ(proc->argv.front(), "/bin/apsh_target");
	std::vector<std::string> tail(proc->argv.end() - 3, proc->argv.end());
	EXPECT_EQ(tail, (std::vector<std::string>{"apsh_argv_marker", "alpha", "beta"}));

	auto env = gt_->environ.at(target->pid);
	std::vector<std::pair<std::string, std::string>> expected{{"PATH", "/bin"},
								  {"APSH_DYN_MARKER", "apsh_dyn_env_d00dfeed"}};
	EXPECT_EQ(env, expected);
}

TEST_F(GroundTruthSample, TargetsAgreeWithProcfsOnMemory)
{
	for (const char *comm : {"apsh_target", "apsh_static"}) {
		SCOPED_TRACE(comm);
		const auto *target = gt_->target(comm);
		ASSERT_NE(target, nullptr);
		const auto &maps = gt_->maps.at(target->pid);
		const auto *rwx = mapping_at(maps, target->rwx.start);
		ASSERT_NE(rwx, nullptr);
		EXPECT_EQ(rwx->end, target->rwx.end);
		EXPECT_TRUE(rwx->read && rwx->write && rwx->exec);
		EXPECT_FALSE(rwx->file_backed());
		EXPECT_EQ(rwx->path, "");
		// The heap marker lies inside [heap].
		auto heap = std::find_if(maps.begin(), maps.end(), [](const auto &m) { return m.path == "[heap]"; });
		ASSERT_NE(heap, maps.end());
		EXPECT_LE(heap->start, target->heap_marker);
		EXPECT_LT(target->heap_marker, heap->end);
	}
	const auto *target = gt_->target("apsh_target");
	ASSERT_TRUE(target->file_map.has_value());
	const auto *file = mapping_at(gt_->maps.at(target->pid), target->file_map->start);
	ASSERT_NE(file, nullptr);
	EXPECT_EQ(file->path, target->file_map_path);
	EXPECT_EQ(file->offset, target->file_map_offset);
	EXPECT_EQ(file->offset, 4096u);
	EXPECT_TRUE(file->file_backed());
	// The dynamic target maps libc; the static one maps no shared object.
	auto maps_path = [&](uint32_t pid, const std::string &path) {
		const auto &maps = gt_->maps.at(pid);
		return std::any_of(maps.begin(), maps.end(), [&](const auto &m) { return m.path == path; });
	};
	EXPECT_TRUE(maps_path(target->pid, "/lib/x86_64-linux-gnu/libc.so.6"));
	EXPECT_FALSE(maps_path(gt_->target("apsh_static")->pid, "/lib/x86_64-linux-gnu/libc.so.6"));
}

TEST_F(GroundTruthSample, SocketsAgreeWithTheTargetsAndHaveOwners)
{
	const auto *target = gt_->target("apsh_target");
	ASSERT_NE(target, nullptr);
	auto find = [&](int protocol, int family, const std::string &addr, uint16_t port,
			int state) -> const GtSocket * {
		for (const auto &s : gt_->sockets)
			if (s.protocol == protocol && s.family == family && s.local_addr == addr &&
			    s.local_port == port && s.state == state)
				return &s;
		return nullptr;
	};
	const auto *listener = find(IPPROTO_TCP, AF_INET, "0.0.0.0", 4444, 10);
	ASSERT_NE(listener, nullptr);
	EXPECT_EQ(listener->owners, std::vector<uint32_t>{target->pid});
	const auto *udp = find(IPPROTO_UDP, AF_INET, "127.0.0.1", 5353, 7);
	ASSERT_NE(udp, nullptr);
	EXPECT_EQ(udp->owners, std::vector<uint32_t>{target->pid});
	const auto *tcp6 = find(IPPROTO_TCP, AF_INET6, "::", 6666, 10);
	ASSERT_NE(tcp6, nullptr);
	EXPECT_EQ(tcp6->owners, std::vector<uint32_t>{target->pid});

	// "tcp_pair=127.0.0.1:<client port> 127.0.0.1:4444": both ends, ESTABLISHED, same owner.
	auto pair = target->fields.find("tcp_pair");
	ASSERT_NE(pair, target->fields.end());
	uint16_t client_port = static_cast<uint16_t>(std::stoul(pair->second.substr(pair->second.find(':') + 1)));
	const auto *client = find(IPPROTO_TCP, AF_INET, "127.0.0.1", client_port, 1);
	ASSERT_NE(client, nullptr);
	EXPECT_EQ(client->remote_port, 4444);
	EXPECT_EQ(client->remote_addr, "127.0.0.1");
	EXPECT_EQ(client->owners, std::vector<uint32_t>{target->pid});

	// Every socket of a stable process has an owner; nc's listener is IPv6 any on 7777.
	const auto *nc = find(IPPROTO_TCP, AF_INET6, "::", 7777, 10);
	ASSERT_NE(nc, nullptr);
	ASSERT_EQ(nc->owners.size(), 1u);
	EXPECT_EQ(gt_->process(nc->owners[0])->comm, "nc");
}

TEST_F(GroundTruthSample, KernelFacts)
{
	ASSERT_EQ(gt_->modules.size(), 1u);
	EXPECT_EQ(gt_->modules[0].name, "dummy");
	EXPECT_EQ(gt_->modules[0].size, 16384u);
	EXPECT_GE(gt_->modules[0].address, 0xffffffffc0000000u);

	ASSERT_EQ(gt_->system_ram.size(), 2u);
	EXPECT_EQ(gt_->system_ram[0].start, 0x1000u);
	EXPECT_EQ(gt_->system_ram[0].end, 0x9fc00u);
	EXPECT_EQ(gt_->system_ram[1].start, 0x100000u);
	ASSERT_TRUE(gt_->kernel_code.has_value());

	// Anchors: init_task and linux_banner lie in the kernel image after _text.
	auto text = gt_->symbol("_text");
	ASSERT_TRUE(text.has_value());
	for (const char *name : {"init_task", "init_top_pgt", "linux_banner", "__start_BTF", "socket_file_ops"}) {
		auto value = gt_->symbol(name);
		ASSERT_TRUE(value.has_value()) << name;
		EXPECT_GT(*value, *text) << name;
	}
	EXPECT_FALSE(gt_->symbol("no_such_symbol").has_value());
}

TEST_F(GroundTruthSample, CollectorAndItsChildrenAreTransient)
{
	const auto *collector = gt_->process(gt_->collector_pid);
	ASSERT_NE(collector, nullptr);
	EXPECT_TRUE(collector->transient);
	EXPECT_EQ(collector->comm, "apsh-ground-tru");
	size_t transient = 0;
	for (const auto &proc : gt_->processes) {
		if (proc.transient) {
			transient++;
			EXPECT_TRUE(proc.pid == gt_->collector_pid || gt_->process(proc.ppid)->transient) << proc.pid;
		}
	}
	EXPECT_EQ(gt_->stable_processes().size(), gt_->processes.size() - transient);
	// pid 1 and kthreadd are stable; kernel threads are marked.
	EXPECT_FALSE(gt_->process(1)->transient);
	EXPECT_TRUE(gt_->process(2)->kernel_thread);
	EXPECT_FALSE(gt_->process(1)->kernel_thread);
}

TEST(GroundTruthParse, RejectsTruncatedCaptures)
{
	std::string text = read_sample();
	ASSERT_FALSE(text.empty());
	// Cut inside the maps sections: the open section is named.
	std::string cut = text.substr(0, text.find("@@BEGIN maps") + 200);
	try {
		GroundTruth::parse(cut, "cut.txt");
		FAIL() << "a truncated capture was accepted";
	} catch (const std::runtime_error &error) {
		EXPECT_NE(std::string(error.what()).find("cut.txt:"), std::string::npos) << error.what();
		EXPECT_NE(std::string(error.what()).find("never closed"), std::string::npos) << error.what();
	}
	// Everything but the final marker.
	std::string no_done = text.substr(0, text.find("@@DONE"));
	EXPECT_THROW(GroundTruth::parse(no_done), std::runtime_error);
}

TEST(GroundTruthParse, RejectsMalformedLinesWithTheirLineNumber)
{
	std::string text = read_sample();
	size_t at = text.find("@@BEGIN processes\n");
	ASSERT_NE(at, std::string::npos);
	size_t line = static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n')) + 2;
	text.insert(at + 18, "not a process line\n");
	try {
		GroundTruth::parse(text, "bad.txt");
		FAIL() << "a malformed process line was accepted";
	} catch (const std::runtime_error &error) {
		EXPECT_NE(std::string(error.what()).find("bad.txt:" + std::to_string(line) + ":"), std::string::npos)
		    << error.what();
	}
	EXPECT_THROW(GroundTruth::parse("hello\n"), std::runtime_error);
	EXPECT_THROW(GroundTruth::parse(""), std::runtime_error);
	EXPECT_THROW(GroundTruth::load("/nonexistent/ground-truth.txt"), std::runtime_error);
}

TEST(GroundTruthParse, ToleratesConsoleLineEndings)
{
	std::string text = read_sample(), crlf;
	for (char c : text) {
		if (c == '\n')
			crlf += '\r';
		crlf += c;
	}
	GroundTruth plain = GroundTruth::parse(text), console = GroundTruth::parse(crlf);
	EXPECT_EQ(console.processes.size(), plain.processes.size());
	EXPECT_EQ(console.maps, plain.maps);
	EXPECT_EQ(console.environ, plain.environ);
}

TEST(GroundTruthParse, ApshConfigSections)
{
	std::string text = read_sample();
	EXPECT_TRUE(GroundTruth::parse(text).apsh_config_files.empty()) << "the sample predates the sections";
	const size_t done = text.rfind("@@DONE");
	ASSERT_NE(done, std::string::npos);
	const std::string btf_hash(64, 'a');
	text.insert(done,
		    "@@BEGIN apsh-config-log\nwrote to /run/apsh-config:\n@@END apsh-config-log\n"
		    "@@BEGIN apsh-config-file kpgd_file.conf\n0x7210000\n0xffffffff8301aa40\n@@END apsh-config-file\n"
		    "@@BEGIN apsh-config-btf\n4359789 " +
			btf_hash + "\n@@END apsh-config-btf\n");
	const GroundTruth gt = GroundTruth::parse(text);
	EXPECT_EQ(gt.apsh_config_files.at("kpgd_file.conf"), "0x7210000\n0xffffffff8301aa40\n");
	EXPECT_EQ(gt.apsh_config_log, "wrote to /run/apsh-config:\n");
	ASSERT_TRUE(gt.apsh_config_btf.has_value());
	EXPECT_EQ(gt.apsh_config_btf->first, 4359789u);
	EXPECT_EQ(gt.apsh_config_btf->second, btf_hash);
	std::string bad = text;
	bad.replace(bad.find("4359789 "), 8, "43x9789 ");
	EXPECT_THROW(GroundTruth::parse(bad), std::runtime_error);
}
