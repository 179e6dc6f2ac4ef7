// The continuous watch: the diff of two states (fake snapshots), and softdpu_apsh_watch_* over a
// fake guest that changes between polls.
#include "api_fixture.hpp"

#include "apsh/api/exec_hash.hpp"
#include "apsh/api/objects.hpp"
#include "apsh/api/watch.hpp"

#include <softdpu/apsh.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <utility>

using namespace apsh_test;
using namespace softdpu::apsh::api;

namespace {

Process make_process(uint32_t pid, uint64_t start, const char *comm)
{
	Process p;
	p.pid = pid;
	p.ppid = 1;
	p.start_time_ns = start;
	p.task = 0xffff888000000000 + pid * 0x1000;
	p.comm = comm;
	return p;
}

void add_process(WatchState &state, const Process &p)
{
	state.processes.emplace(process_key(p), process_event(p));
}

Connection listener(uint16_t port, int protocol = IPPROTO_TCP, uint32_t net_ns = 4026531840u)
{
	Connection c;
	c.pid = 7;
	c.comm = "nc";
	c.protocol = protocol;
	c.family = AF_INET;
	c.local_addr = "0.0.0.0";
	c.local_port = port;
	c.remote_addr = "0.0.0.0";
	c.state = protocol == IPPROTO_TCP ? 10 : 7;
	c.net_ns = net_ns;
	return c;
}

std::vector<WatchEvent> diff(const WatchState &before, const WatchState &after,
			     uint32_t kinds = SOFTDPU_APSH_WATCH_KIND_ALL)
{
	std::vector<WatchEvent> events;
	diff_states(before, after, kinds, 1234, events);
	return events;
}

TEST(WatchDiff, ProcessesStartedAndExited)
{
	WatchState before, after;
	add_process(before, make_process(1, 100, "init"));
	add_process(before, make_process(50, 500, "old"));
	add_process(after, make_process(1, 100, "init"));
	add_process(after, make_process(60, 600, "new"));
	auto events = diff(before, after);
	ASSERT_EQ(events.size(), 2u);
	EXPECT_EQ(events[0].type, SOFTDPU_APSH_WATCH_PROCESS_STARTED);
	EXPECT_EQ(events[0].pid, 60u);
	EXPECT_EQ(events[0].comm, "new");
	EXPECT_EQ(events[0].start_time_ns, 600u);
	EXPECT_EQ(events[0].timestamp_ns, 1234u);
	EXPECT_EQ(events[1].type, SOFTDPU_APSH_WATCH_PROCESS_EXITED);
	EXPECT_EQ(events[1].pid, 50u);
	EXPECT_EQ(events[1].comm, "old");
	EXPECT_TRUE(diff(after, after).empty());
}

TEST(WatchDiff, ReusedPidIsANewProcess)
{
	WatchState before, after;
	add_process(before, make_process(77, 1000, "first"));
	Process second = make_process(77, 2000, "second");
	add_process(after, second);
	auto events = diff(before, after);
	ASSERT_EQ(events.size(), 2u);
	EXPECT_EQ(events[0].type, SOFTDPU_APSH_WATCH_PROCESS_STARTED);
	EXPECT_EQ(events[0].comm, "second");
	EXPECT_EQ(events[1].type, SOFTDPU_APSH_WATCH_PROCESS_EXITED);
	EXPECT_EQ(events[1].comm, "first");
	// A process that only changed name (exec) is the same process.
	WatchState renamed;
	second.comm = "renamed";
	add_process(renamed, second);
	EXPECT_TRUE(diff(after, renamed).empty());
}

TEST(WatchDiff, ModulesByNameAndAddress)
{
	WatchState before, after;
	before.modules.emplace(ModuleKey{"dummy", 0xffffffffc0000000},
			       module_event({0xffffffffc0000000, "dummy", 4096}));
	after.modules.emplace(ModuleKey{"dummy", 0xffffffffc0010000},
			      module_event({0xffffffffc0010000, "dummy", 4096}));
	auto events = diff(before, after);
	ASSERT_EQ(events.size(), 2u);
	EXPECT_EQ(events[0].type, SOFTDPU_APSH_WATCH_MODULE_LOADED);
	EXPECT_EQ(events[0].address, 0xffffffffc0010000u);
	EXPECT_EQ(events[0].name, "dummy");
	EXPECT_EQ(events[0].size, 4096u);
	EXPECT_EQ(events[1].type, SOFTDPU_APSH_WATCH_MODULE_UNLOADED);
	EXPECT_EQ(events[1].address, 0xffffffffc0000000u);
}

TEST(WatchDiff, ListeningSocketsByNamespaceProtocolAddressAndPort)
{
	Connection connected = listener(80);
	connected.state = 1;
	connected.remote_port = 5555;
	EXPECT_FALSE(is_listening(connected));
	EXPECT_TRUE(is_listening(listener(80)));
	EXPECT_TRUE(is_listening(listener(53, IPPROTO_UDP)));
	Connection udp_connected = listener(53, IPPROTO_UDP);
	udp_connected.remote_port = 53;
	EXPECT_FALSE(is_listening(udp_connected));

	WatchState before, after;
	for (const Connection &c : {listener(80), listener(53, IPPROTO_UDP)})
		before.sockets.emplace(socket_key(c), socket_event(c));
	// Same port in another namespace, and as UDP: both new; TCP 80 in the host namespace closed.
	for (const Connection &c : {listener(80, IPPROTO_TCP, 4026532000u), listener(53, IPPROTO_UDP)})
		after.sockets.emplace(socket_key(c), socket_event(c));
	auto events = diff(before, after);
	ASSERT_EQ(events.size(), 2u);
	EXPECT_EQ(events[0].type, SOFTDPU_APSH_WATCH_SOCKET_LISTENING);
	EXPECT_EQ(events[0].net_ns, 4026532000u);
	EXPECT_EQ(events[0].protocol, "tcp");
	EXPECT_EQ(events[0].ip_version, 4);
	EXPECT_EQ(events[0].local_port, 80);
	EXPECT_EQ(events[1].type, SOFTDPU_APSH_WATCH_SOCKET_CLOSED);
	EXPECT_EQ(events[1].net_ns, 4026531840u);
}

TEST(WatchDiff, FindingsAreReportedWhenTheyAppearOnly)
{
	const Process p = make_process(9, 900, "victim");
	WatchEvent finding = process_event(p);
	finding.address = 0x700000;
	WatchState before, after;
	add_process(before, p);
	add_process(after, p);
	after.injections.emplace(FindingKey{process_key(p), 0x700000, {}}, finding);
	after.attestation_failures.emplace(FindingKey{process_key(p), 0x400000, {}}, finding);
	after.yara_matches.emplace(FindingKey{process_key(p), 0x600000, "rule_a"}, finding);
	after.yara_matches.emplace(FindingKey{process_key(p), 0x600000, "rule_b"}, finding);
	auto events = diff(before, after);
	ASSERT_EQ(events.size(), 4u);
	EXPECT_EQ(events[0].type, SOFTDPU_APSH_WATCH_ATTESTATION_FAILURE);
	EXPECT_EQ(events[1].type, SOFTDPU_APSH_WATCH_YARA_MATCH);
	EXPECT_EQ(events[2].type, SOFTDPU_APSH_WATCH_YARA_MATCH);
	EXPECT_EQ(events[3].type, SOFTDPU_APSH_WATCH_INJECTION);
	EXPECT_EQ(events[3].pid, 9u);
	// Gone again: no event (findings have no "ended" event).
	EXPECT_TRUE(diff(after, before).empty());
	// Kinds not watched are not compared.
	EXPECT_TRUE(diff(before, after, SOFTDPU_APSH_WATCH_KIND_PROCESSES).empty());
	EXPECT_EQ(diff(before, after, SOFTDPU_APSH_WATCH_KIND_INJECTIONS).size(), 1u);
}

// ---- The C API over the fake guest ----

struct Collected {
	std::vector<softdpu_apsh_watch_event_type> types;
	std::vector<std::string> texts; // comm, name, or rule per event
	std::vector<uint64_t> addresses;
	std::vector<uint32_t> pids;
};

void collect(const softdpu_apsh_watch_event *event, void *user_data)
{
	auto *out = static_cast<Collected *>(user_data);
	out->types.push_back(event->type);
	out->texts.push_back(*event->name != '\0' ? event->name : event->comm);
	out->addresses.push_back(event->address);
	out->pids.push_back(event->pid);
	EXPECT_NE(event->path, nullptr);
	EXPECT_NE(event->protocol, nullptr);
	EXPECT_NE(event->local_addr, nullptr);
	EXPECT_NE(event->protection, nullptr);
	EXPECT_GT(event->timestamp_ns, 0u);
}

class ApshWatch : public ApshApi {
protected:
	void TearDown() override
	{
		softdpu_apsh_watch_destroy(watch_);
		ApshApi::TearDown();
	}

	Collected poll_ok()
	{
		Collected out;
		uint32_t count = 99;
		EXPECT_EQ(softdpu_apsh_watch_poll(watch_, collect, &out, &count), DOCA_SUCCESS);
		EXPECT_EQ(count, out.types.size());
		return out;
	}

	softdpu_apsh_watch *watch_ = nullptr;
};

TEST_F(ApshWatch, CreateChecksItsArguments)
{
	EXPECT_EQ(softdpu_apsh_watch_create(system_, SOFTDPU_APSH_WATCH_KIND_DEFAULT, &watch_), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(watch_, nullptr);
	start();
	EXPECT_EQ(softdpu_apsh_watch_create(nullptr, SOFTDPU_APSH_WATCH_KIND_DEFAULT, &watch_),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_apsh_watch_create(system_, SOFTDPU_APSH_WATCH_KIND_DEFAULT, nullptr),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_apsh_watch_create(system_, 0, &watch_), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_apsh_watch_create(system_, 0x40, &watch_), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(watch_, nullptr);
	ASSERT_EQ(softdpu_apsh_watch_create(system_, SOFTDPU_APSH_WATCH_KIND_ALL, &watch_), DOCA_SUCCESS);

	EXPECT_EQ(softdpu_apsh_watch_poll(nullptr, nullptr, nullptr, nullptr), DOCA_ERROR_INVALID_VALUE);
	// Attestation and YARA are watched, but neither a hash map nor rules are set.
	uint32_t count = 5;
	EXPECT_EQ(softdpu_apsh_watch_poll(watch_, nullptr, nullptr, &count), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(count, 0u);
	EXPECT_EQ(softdpu_apsh_watch_set_hash_map(nullptr, "x"), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_apsh_watch_set_hash_map(watch_, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_apsh_watch_set_hash_map(watch_, "/nonexistent/map.json"), DOCA_ERROR_INVALID_VALUE);
	TempFile not_a_map("{\"format\": \"something else\"}");
	EXPECT_EQ(softdpu_apsh_watch_set_hash_map(watch_, not_a_map.path()), DOCA_ERROR_INVALID_VALUE);

	doca_apsh_yara_rule rules[] = {DOCA_APSH_YARA_RULE_HELLO_WORLD, static_cast<doca_apsh_yara_rule>(7)};
	EXPECT_EQ(softdpu_apsh_watch_set_yara_rules(nullptr, rules, 1, DOCA_APSH_YARA_SCAN_VMA),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_apsh_watch_set_yara_rules(watch_, nullptr, 1, DOCA_APSH_YARA_SCAN_VMA),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_apsh_watch_set_yara_rules(watch_, rules, 2, DOCA_APSH_YARA_SCAN_VMA),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_apsh_watch_set_yara_rules(watch_, rules, 1, 0), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_apsh_watch_set_yara_rules(watch_, rules, 1, 0x8), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_apsh_watch_set_user_yara_rules(watch_, nullptr, DOCA_APSH_YARA_SCAN_VMA),
		  DOCA_ERROR_INVALID_VALUE);
	doca_apsh_user_yara_rules *user_rules = nullptr;
	ASSERT_EQ(doca_apsh_user_yara_rules_create_from_string("rule r { condition: true }", &user_rules),
		  DOCA_SUCCESS);
	EXPECT_EQ(softdpu_apsh_watch_set_user_yara_rules(nullptr, user_rules, DOCA_APSH_YARA_SCAN_VMA),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_apsh_watch_set_user_yara_rules(watch_, user_rules, 0), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_apsh_watch_set_user_yara_rules(watch_, user_rules, 0x8), DOCA_ERROR_INVALID_VALUE);
	doca_apsh_user_yara_rules_destroy(user_rules);
	// Built-in rules that libyara cannot compile.
	softdpu::apsh::api::testing::fail_builtin_yara_rules(true);
	EXPECT_EQ(softdpu_apsh_watch_set_yara_rules(watch_, rules, 1, DOCA_APSH_YARA_SCAN_VMA),
		  DOCA_ERROR_INITIALIZATION);
	softdpu::apsh::api::testing::fail_builtin_yara_rules(false);
	EXPECT_EQ(softdpu_apsh_watch_set_yara_rules(watch_, rules, 1, DOCA_APSH_YARA_SCAN_HEAP), DOCA_SUCCESS);
	// Still no hash map.
	EXPECT_EQ(softdpu_apsh_watch_poll(watch_, nullptr, nullptr, nullptr), DOCA_ERROR_BAD_STATE);
	softdpu_apsh_watch_destroy(nullptr);
}

TEST_F(ApshWatch, YaraWithoutRulesIsABadState)
{
	start();
	ASSERT_EQ(softdpu_apsh_watch_create(system_, SOFTDPU_APSH_WATCH_KIND_YARA, &watch_), DOCA_SUCCESS);
	uint32_t count = 5;
	EXPECT_EQ(softdpu_apsh_watch_poll(watch_, collect, nullptr, &count), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(count, 0u);
	doca_apsh_yara_rule rule = DOCA_APSH_YARA_RULE_HELLO_WORLD;
	ASSERT_EQ(softdpu_apsh_watch_set_yara_rules(watch_, &rule, 1, DOCA_APSH_YARA_SCAN_VMA), DOCA_SUCCESS);
	EXPECT_TRUE(poll_ok().types.empty());
}

TEST_F(ApshWatch, ReportsWhatChangesBetweenPolls)
{
	start();
	ASSERT_EQ(softdpu_apsh_watch_create(system_, SOFTDPU_APSH_WATCH_KIND_DEFAULT, &watch_), DOCA_SUCCESS);
	EXPECT_TRUE(poll_ok().types.empty()); // the baseline
	EXPECT_TRUE(poll_ok().types.empty()); // nothing changed

	Process started = guest_->processes[1];
	started.pid = 99;
	started.task = 0xffff888000300000;
	started.comm = "newcomer";
	guest_->processes.push_back(started);
	guest_->modules.push_back({0xffffffffc0100000, "dummy", 8192});
	guest_->connections.push_back(listener(8080));
	Injection injection = guest_->injections[42][0];
	injection.suspected_start = 0x710000;
	injection.suspected_end = 0x711000;
	guest_->injections[42].push_back(injection);
	Collected events = poll_ok();
	ASSERT_EQ(events.types.size(), 4u);
	EXPECT_EQ(events.types[0], SOFTDPU_APSH_WATCH_PROCESS_STARTED);
	EXPECT_EQ(events.texts[0], "newcomer");
	EXPECT_EQ(events.types[1], SOFTDPU_APSH_WATCH_MODULE_LOADED);
	EXPECT_EQ(events.texts[1], "dummy");
	EXPECT_EQ(events.types[2], SOFTDPU_APSH_WATCH_SOCKET_LISTENING);
	EXPECT_EQ(events.types[3], SOFTDPU_APSH_WATCH_INJECTION);
	EXPECT_EQ(events.addresses[3], 0x710000u);
	EXPECT_EQ(events.pids[3], 42u);

	guest_->processes.erase(guest_->processes.begin() + 2);
	guest_->modules.pop_back();
	guest_->connections.pop_back();
	events = poll_ok();
	ASSERT_EQ(events.types.size(), 3u);
	EXPECT_EQ(events.types[0], SOFTDPU_APSH_WATCH_PROCESS_EXITED);
	EXPECT_EQ(events.pids[0], 99u);
	EXPECT_EQ(events.types[1], SOFTDPU_APSH_WATCH_MODULE_UNLOADED);
	EXPECT_EQ(events.types[2], SOFTDPU_APSH_WATCH_SOCKET_CLOSED);
	// Polls without a callback count the changes.
	guest_->modules.push_back({0xffffffffc0100000, "dummy", 8192});
	uint32_t count = 0;
	EXPECT_EQ(softdpu_apsh_watch_poll(watch_, nullptr, nullptr, &count), DOCA_SUCCESS);
	EXPECT_EQ(count, 1u);
}

TEST_F(ApshWatch, AGuestThatCannotBeReadFailsThePollAndKeepsTheState)
{
	start();
	ASSERT_EQ(softdpu_apsh_watch_create(system_, SOFTDPU_APSH_WATCH_KIND_PROCESSES, &watch_), DOCA_SUCCESS);
	EXPECT_TRUE(poll_ok().types.empty());
	guest_->processes.pop_back();
	guest_->fail = {DOCA_ERROR_IO_FAILED, "QEMU process exited"};
	uint32_t count = 9;
	EXPECT_EQ(softdpu_apsh_watch_poll(watch_, collect, nullptr, &count), DOCA_ERROR_INITIALIZATION);
	EXPECT_EQ(count, 0u);
	guest_->fail = {DOCA_ERROR_NO_MEMORY, "out of memory"};
	EXPECT_EQ(softdpu_apsh_watch_poll(watch_, collect, nullptr, nullptr), DOCA_ERROR_NO_MEMORY);
	guest_->fail = {};
	guest_->throw_in = "processes";
	EXPECT_EQ(softdpu_apsh_watch_poll(watch_, collect, nullptr, nullptr), DOCA_ERROR_NO_MEMORY);
	guest_->throw_in.clear();
	// Every poll was one batch, ended however the poll ended (the exception included).
	EXPECT_EQ(guest_->batches, 4);
	EXPECT_EQ(guest_->open_batches, 0);
	// The change is reported against the last good state.
	Collected events = poll_ok();
	ASSERT_EQ(events.types.size(), 1u);
	EXPECT_EQ(events.types[0], SOFTDPU_APSH_WATCH_PROCESS_EXITED);
	EXPECT_EQ(events.pids[0], 42u);
}

// A callback that polls its own watch: the inner poll is refused, the outer one goes on.
struct Reentrant {
	softdpu_apsh_watch *watch = nullptr;
	std::vector<doca_error_t> inner_results;
	std::vector<uint32_t> inner_counts;
	std::vector<uint32_t> pids;
	uint32_t *outer_count = nullptr;
};

void poll_again(const softdpu_apsh_watch_event *event, void *user_data)
{
	auto *out = static_cast<Reentrant *>(user_data);
	out->pids.push_back(event->pid);
	uint32_t count = 77;
	out->inner_results.push_back(softdpu_apsh_watch_poll(out->watch, poll_again, user_data, &count));
	out->inner_counts.push_back(count);
	// The outer poll's counter too: it is set after the callbacks.
	if (out->outer_count != nullptr)
		(void)softdpu_apsh_watch_poll(out->watch, nullptr, nullptr, out->outer_count);
}

TEST_F(ApshWatch, ACallbackThatPollsItsOwnWatchIsRefused)
{
	start();
	ASSERT_EQ(softdpu_apsh_watch_create(system_, SOFTDPU_APSH_WATCH_KIND_PROCESSES, &watch_), DOCA_SUCCESS);
	EXPECT_TRUE(poll_ok().types.empty());
	for (uint32_t pid : {97u, 98u}) {
		Process started = guest_->processes[1];
		started.pid = pid;
		started.task = 0xffff888000300000 + pid * 0x1000;
		guest_->processes.push_back(started);
	}
	Reentrant reentrant;
	reentrant.watch = watch_;
	uint32_t count = 0;
	reentrant.outer_count = &count;
	EXPECT_EQ(softdpu_apsh_watch_poll(watch_, poll_again, &reentrant, &count), DOCA_SUCCESS);
	EXPECT_EQ(count, 2u);
	// Both events came, each callback's poll was refused and reported nothing.
	ASSERT_EQ(reentrant.pids.size(), 2u);
	EXPECT_EQ(reentrant.pids[0], 97u);
	EXPECT_EQ(reentrant.pids[1], 98u);
	EXPECT_EQ(reentrant.inner_results, (std::vector<doca_error_t>{DOCA_ERROR_BAD_STATE, DOCA_ERROR_BAD_STATE}));
	EXPECT_EQ(reentrant.inner_counts, (std::vector<uint32_t>{0u, 0u}));
	// The watch still works: the next poll sees the next change only.
	guest_->processes.pop_back();
	Collected events = poll_ok();
	ASSERT_EQ(events.types.size(), 1u);
	EXPECT_EQ(events.types[0], SOFTDPU_APSH_WATCH_PROCESS_EXITED);
	EXPECT_EQ(events.pids[0], 98u);
}

void destroy_own_watch(const softdpu_apsh_watch_event *, void *user_data)
{
	auto *out = static_cast<Reentrant *>(user_data);
	out->pids.push_back(0);
	softdpu_apsh_watch_destroy(out->watch);
}

TEST_F(ApshWatch, ACallbackMayDestroyItsOwnWatch)
{
	start();
	ASSERT_EQ(softdpu_apsh_watch_create(system_, SOFTDPU_APSH_WATCH_KIND_PROCESSES, &watch_), DOCA_SUCCESS);
	EXPECT_TRUE(poll_ok().types.empty());
	guest_->processes.pop_back();
	guest_->processes.pop_back();
	Reentrant reentrant;
	reentrant.watch = std::exchange(watch_, nullptr); // freed by the poll (ASan checks it is, once)
	uint32_t count = 0;
	EXPECT_EQ(softdpu_apsh_watch_poll(reentrant.watch, destroy_own_watch, &reentrant, &count), DOCA_SUCCESS);
	EXPECT_EQ(count, 2u);
	EXPECT_EQ(reentrant.pids.size(), 1u); // no callbacks after the destroy
}

TEST_F(ApshWatch, AProcessThatExitsWhileItIsReadIsNotAnError)
{
	start();
	ASSERT_EQ(softdpu_apsh_watch_create(system_, SOFTDPU_APSH_WATCH_KIND_INJECTIONS, &watch_), DOCA_SUCCESS);
	EXPECT_TRUE(poll_ok().types.empty());
	guest_->fail = {DOCA_ERROR_NOT_FOUND, "process exited"};
	guest_->fail_only = "injections";
	EXPECT_TRUE(poll_ok().types.empty());
	guest_->fail = {DOCA_ERROR_IO_FAILED, "page tables unreadable"};
	EXPECT_EQ(softdpu_apsh_watch_poll(watch_, nullptr, nullptr, nullptr), DOCA_ERROR_INITIALIZATION);
}

TEST_F(ApshWatch, OutlivesItsSystemAndContext)
{
	start();
	ASSERT_EQ(softdpu_apsh_watch_create(system_, SOFTDPU_APSH_WATCH_KIND_MODULES, &watch_), DOCA_SUCCESS);
	EXPECT_TRUE(poll_ok().types.empty());
	doca_apsh_system_destroy(system_);
	system_ = nullptr;
	doca_apsh_destroy(ctx_);
	ctx_ = nullptr;
	guest_->modules.clear();
	Collected events = poll_ok();
	ASSERT_EQ(events.types.size(), 1u);
	EXPECT_EQ(events.types[0], SOFTDPU_APSH_WATCH_MODULE_UNLOADED);
	EXPECT_EQ(events.texts[0], "marker_mod");
}

TEST_F(ApshWatch, AttestationFailureWhenAnExecutablePageChanges)
{
	std::vector<uint8_t> text(8192);
	for (size_t i = 0; i < text.size(); ++i)
		text[i] = static_cast<uint8_t>(i * 7 + 1);
	guest_->put_bytes(42, 0x400000, text.data(), text.size());
	ExecHashFile file;
	file.path = "/bin/marker_app";
	file.size = text.size();
	file.elf = false;
	file.pages[0] = hash_page(std::span(text).first(4096));
	file.pages[4096] = hash_page(std::span(text).subspan(4096));
	ExecHashMap map;
	map.files.push_back(file);
	TempFile map_file(format_exec_hash_map(map));

	start();
	ASSERT_EQ(softdpu_apsh_watch_create(system_, SOFTDPU_APSH_WATCH_KIND_ATTESTATION, &watch_), DOCA_SUCCESS);
	ASSERT_EQ(softdpu_apsh_watch_set_hash_map(watch_, map_file.path()), DOCA_SUCCESS);
	EXPECT_TRUE(poll_ok().types.empty());
	EXPECT_TRUE(poll_ok().types.empty());
	const uint8_t patch = 0xcc;
	guest_->put_bytes(42, 0x401010, &patch, 1);
	Collected events = poll_ok();
	ASSERT_EQ(events.types.size(), 1u);
	EXPECT_EQ(events.types[0], SOFTDPU_APSH_WATCH_ATTESTATION_FAILURE);
	EXPECT_EQ(events.pids[0], 42u);
	EXPECT_EQ(events.addresses[0], 0x400000u);
	EXPECT_TRUE(poll_ok().types.empty()); // reported once while it lasts
}

// With DOCA_APSH_HASHTEST_LIMIT set, the watch attests the same areas as doca_apsh_attestation_get:
// the first `limit` executable areas, anonymous ones and files not in the map counted too.
class ApshWatchHashtestLimit : public ApshWatch {
protected:
	void SetUp() override
	{
		ApshWatch::SetUp();
		text_.resize(8192);
		for (size_t i = 0; i < text_.size(); ++i)
			text_[i] = static_cast<uint8_t>(i * 7 + 1);
		ExecHashFile file;
		file.path = "/bin/marker_app";
		file.size = text_.size();
		file.pages[0] = hash_page(std::span(text_).first(4096));
		file.pages[4096] = hash_page(std::span(text_).subspan(4096));
		ExecHashMap map;
		map.files.push_back(file);
		map_ = std::make_unique<TempFile>(format_exec_hash_map(map));
		auto area = [](uint64_t start, uint64_t pages, uint32_t protection, const char *path) {
			return MemoryArea{42, "marker_app", start, start + pages * 4096,
					  0,  protection,   path,  *path != '\0'};
		};
		// Executable areas, in order: anonymous, the map's file (twice), a file the map does not
		// know, the map's file writable, and again; the heap in between is not executable.
		guest_->areas[42] = {area(0x300000, 1, 5, ""),
				     area(0x400000, 2, 5, "/bin/marker_app"),
				     area(0x600000, 1, 3, "[heap]"),
				     area(0x410000, 1, 5, "/bin/unknown"),
				     area(0x420000, 2, 5, "/bin/marker_app"),
				     area(0x430000, 2, 7, "/bin/marker_app"),
				     area(0x440000, 2, 5, "/bin/marker_app")};
	}

	// Every area's pages as the file has them (and something in the others).
	void clean_pages()
	{
		for (const MemoryArea &area : guest_->areas[42]) {
			if (area.file_path == "/bin/marker_app")
				guest_->put_bytes(42, area.start, text_.data(), text_.size());
			else
				guest_->put_bytes(42, area.start, text_.data(), 4096);
		}
	}

	// A started system of its own with this hashtest limit.
	doca_apsh_system *system_with_limit(uint32_t limit)
	{
		doca_apsh_system *system = doca_apsh_system_create(ctx_);
		EXPECT_NE(system, nullptr);
		EXPECT_EQ(doca_apsh_sys_os_type_set(system, DOCA_APSH_SYSTEM_LINUX), DOCA_SUCCESS);
		EXPECT_EQ(doca_apsh_sys_dev_set(system, rep_), DOCA_SUCCESS);
		EXPECT_EQ(doca_apsh_sys_config(system, DOCA_APSH_HASHTEST_LIMIT, limit), DOCA_SUCCESS);
		EXPECT_EQ(doca_apsh_system_start(system), DOCA_SUCCESS);
		return system;
	}

	std::vector<uint8_t> text_;
	std::unique_ptr<TempFile> map_;
};

TEST_F(ApshWatchHashtestLimit, WatchAttestsTheAreasAttestationGetDoes)
{
	const std::vector<uint64_t> executable = {0x300000, 0x400000, 0x410000, 0x420000, 0x430000, 0x440000};
	const std::vector<uint64_t> patched = {0x400000, 0x420000, 0x440000};
	for (uint32_t limit = 1; limit <= executable.size() + 1; ++limit) {
		SCOPED_TRACE("hashtest limit " + std::to_string(limit));
		clean_pages();
		doca_apsh_system *system = system_with_limit(limit);
		ASSERT_NE(system, nullptr);
		ASSERT_EQ(softdpu_apsh_watch_create(system, SOFTDPU_APSH_WATCH_KIND_ATTESTATION, &watch_),
			  DOCA_SUCCESS);
		ASSERT_EQ(softdpu_apsh_watch_set_hash_map(watch_, map_->path()), DOCA_SUCCESS);
		EXPECT_TRUE(poll_ok().types.empty()); // the baseline
		const uint8_t patch = 0xcc;
		for (uint64_t start : patched)
			guest_->put_bytes(42, start + 0x1010, &patch, 1);
		const Collected events = poll_ok();

		doca_apsh_process **processes = nullptr;
		int count = 0;
		ASSERT_EQ(doca_apsh_processes_get(system, &processes, &count), DOCA_SUCCESS);
		doca_apsh_process *app = nullptr;
		for (int i = 0; i < count; ++i)
			if (doca_apsh_process_info_get(processes[i], DOCA_APSH_PROCESS_PID) == 42u)
				app = processes[i];
		ASSERT_NE(app, nullptr);
		doca_apsh_attestation **attestation = nullptr;
		int n = 0;
		ASSERT_EQ(doca_apsh_attestation_get(app, map_->path(), &attestation, &n), DOCA_SUCCESS);
		// doca_apsh_attestation_get: the first `limit` executable areas; the patched ones among them
		// have a page in memory that differs from the map.
		std::vector<uint64_t> attested, differing;
		for (int i = 0; i < n; ++i) {
			const uint64_t start =
			    doca_apsh_attst_info_get(attestation[i], DOCA_APSH_ATTESTATION_START_ADDRESS);
			attested.push_back(start);
			if (doca_apsh_attst_info_get(attestation[i], DOCA_APSH_ATTESTATION_HASH_DATA_IS_PRESENT) &&
			    doca_apsh_attst_info_get(attestation[i], DOCA_APSH_ATTESTATION_MATCHING_HASHES) <
				doca_apsh_attst_info_get(attestation[i], DOCA_APSH_ATTESTATION_PAGES_PRESENT))
				differing.push_back(start);
		}
		doca_apsh_attestation_free(attestation);
		doca_apsh_processes_free(processes);
		const size_t checked = std::min<size_t>(limit, executable.size());
		EXPECT_EQ(attested, std::vector<uint64_t>(executable.begin(), executable.begin() + checked));
		std::vector<uint64_t> expected;
		for (uint64_t start : patched)
			if (std::find(attested.begin(), attested.end(), start) != attested.end())
				expected.push_back(start);
		EXPECT_EQ(differing, expected);
		// The watch: a failure for each patched area that doca_apsh_attestation_get checked.
		EXPECT_EQ(events.addresses, expected);
		EXPECT_TRUE(std::all_of(events.types.begin(), events.types.end(),
					[](auto type) { return type == SOFTDPU_APSH_WATCH_ATTESTATION_FAILURE; }));
		softdpu_apsh_watch_destroy(std::exchange(watch_, nullptr));
		doca_apsh_system_destroy(system);
	}
}

TEST_F(ApshWatch, NewYaraMatches)
{
	doca_apsh_user_yara_rules *rules = nullptr;
	ASSERT_EQ(doca_apsh_user_yara_rules_create_from_string(
		      "rule watch_marker { strings: $a = \"WATCH_MARKER_7\" condition: $a }", &rules),
		  DOCA_SUCCESS);
	start();
	ASSERT_EQ(softdpu_apsh_watch_create(system_, SOFTDPU_APSH_WATCH_KIND_YARA, &watch_), DOCA_SUCCESS);
	ASSERT_EQ(softdpu_apsh_watch_set_user_yara_rules(watch_, rules, DOCA_APSH_YARA_SCAN_VMA), DOCA_SUCCESS);
	doca_apsh_user_yara_rules_destroy(rules); // the watch keeps them
	guest_->put_zero_page(42, 0x600000);
	EXPECT_TRUE(poll_ok().types.empty());
	const char marker[] = "WATCH_MARKER_7";
	guest_->put_bytes(42, 0x601100, marker, sizeof(marker) - 1);
	Collected events = poll_ok();
	ASSERT_EQ(events.types.size(), 1u);
	EXPECT_EQ(events.types[0], SOFTDPU_APSH_WATCH_YARA_MATCH);
	EXPECT_EQ(events.texts[0], "watch_marker");
	EXPECT_EQ(events.addresses[0], 0x601000u);
	EXPECT_TRUE(poll_ok().types.empty());
}

// ---- The incremental refresh ----

TEST(WatchFingerprint, PagesAndAreas)
{
	const FingerprintKey key = FingerprintKey::random();
	std::array<uint8_t, kPageSize> page{};
	const Fingerprint zero = page_fingerprint(page, key);
	EXPECT_EQ(page_fingerprint(page, key), zero);
	page[4095] = 1;
	const Fingerprint last_byte = page_fingerprint(page, key);
	EXPECT_NE(last_byte, zero);
	page[4095] = 0;
	page[0] = 1;
	EXPECT_NE(page_fingerprint(page, key), zero);
	EXPECT_NE(page_fingerprint(page, key), last_byte);
	// Another key, other fingerprints.
	FingerprintKey other = key;
	other.k1 ^= 1;
	EXPECT_NE(page_fingerprint(page, other), page_fingerprint(page, key));

	// An area: the pages in order, present or not.
	auto area = [&](std::initializer_list<int> pages) {
		AreaFingerprint fingerprint(key);
		for (int kind : pages) {
			if (kind == 0)
				fingerprint.add_absent();
			else
				fingerprint.add_present(kind == 1 ? zero : last_byte);
		}
		return fingerprint.value();
	};
	EXPECT_EQ(area({1, 2, 0}), area({1, 2, 0}));
	EXPECT_NE(area({1, 2, 0}), area({2, 1, 0}));
	EXPECT_NE(area({1, 0, 2}), area({1, 2, 0}));
	EXPECT_NE(area({1, 2}), area({1, 2, 0}));
	EXPECT_NE(area({0}), area({1}));
	EXPECT_NE(area({}), area({0}));
}

// A second process with the same memory as pid 42 (sample_guest), its pages on the same frames.
class WatchIncremental : public ApshApi {
protected:
	void SetUp() override
	{
		ApshApi::SetUp();
		Process twin = guest_->processes[1];
		twin.pid = 43;
		twin.task = 0xffff888000400000;
		twin.comm = "twin_app";
		guest_->processes.push_back(twin);
		for (MemoryArea area : guest_->areas[42]) {
			area.pid = 43;
			guest_->areas[43].push_back(area);
		}
		// pid 42's heap: three pages, the middle one absent; text: two pages.
		std::vector<uint8_t> bytes(4096);
		for (uint64_t va : {0x400000, 0x401000, 0x600000, 0x602000}) {
			for (size_t i = 0; i < bytes.size(); ++i)
				bytes[i] = static_cast<uint8_t>(i * 13 + va / 4096);
			guest_->put_bytes(42, va, bytes.data(), bytes.size());
			guest_->frames[{42, va}] = 0x100000 + va / 16;
			guest_->share(43, va, 0x100000 + va / 16);
		}
	}

	void TearDown() override
	{
		watch_.reset();
		ApshApi::TearDown();
	}

	// A hash map of /bin/marker_app whose two pages are pid 42's text as it is now.
	std::string text_hash_map()
	{
		ExecHashFile file;
		file.path = "/bin/marker_app";
		file.size = 8192;
		file.elf = false;
		std::array<uint8_t, kPageSize> page;
		for (uint64_t offset : {0u, 4096u}) {
			std::memcpy(page.data(), guest_->pages[{42, 0x400000 + offset}].data(), page.size());
			file.pages[offset] = hash_page(page);
		}
		ExecHashMap map;
		map.files.push_back(file);
		return format_exec_hash_map(map);
	}

	void watch(uint32_t kinds)
	{
		start();
		watch_ = std::make_unique<Watch>(system_->system, kinds);
	}

	std::vector<WatchEvent> poll()
	{
		std::vector<WatchEvent> events;
		EXPECT_TRUE(watch_->poll(events).ok());
		return events;
	}

	std::unique_ptr<Watch> watch_;
};

TEST(WatchFrameTable, FindsWhatItHoldsGrowsAndForgetsAPoll)
{
	FrameTable table;
	EXPECT_EQ(table.find(0x1000), nullptr);
	for (uint64_t i = 0; i < 5000; ++i) { // grows past its first size several times
		FrameTable::Entry &entry = table.at(i * 0x1000);
		EXPECT_EQ(entry.have, 0);
		entry.fingerprint = {i, ~i};
		entry.have = FrameTable::kFingerprint;
	}
	EXPECT_EQ(table.size(), 5000u);
	for (uint64_t i = 0; i < 5000; ++i) {
		FrameTable::Entry *entry = table.find(i * 0x1000);
		ASSERT_NE(entry, nullptr) << i;
		EXPECT_EQ(entry->fingerprint, (Fingerprint{i, ~i}));
		EXPECT_EQ(&table.at(i * 0x1000), entry); // at() finds it, adds nothing
	}
	EXPECT_EQ(table.size(), 5000u);
	EXPECT_EQ(table.find(5000 * 0x1000), nullptr);
	table.clear();
	EXPECT_EQ(table.size(), 0u);
	for (uint64_t i = 0; i < 5000; ++i)
		ASSERT_EQ(table.find(i * 0x1000), nullptr) << i;
	FrameTable::Entry &again = table.at(0x3000); // a fresh entry, nothing of the last poll
	EXPECT_EQ(again.have, 0);
	EXPECT_EQ(table.size(), 1u);
}

TEST_F(WatchIncremental, YaraScansAreaContentsOncePerChange)
{
	std::shared_ptr<YaraRules> rules;
	ASSERT_TRUE(YaraRules::compile("rule inc_marker { strings: $a = \"INC_MARKER_42\" condition: $a }", "test",
				       false, rules)
			.ok());
	watch(SOFTDPU_APSH_WATCH_KIND_YARA);
	watch_->set_yara(rules, {}, DOCA_APSH_YARA_SCAN_VMA);
	EXPECT_TRUE(poll().empty());
	// Each process has three areas (text, heap, rwx with no page); pid 43's are pid 42's contents.
	EXPECT_EQ(watch_->stats().yara_areas_scanned, 3u);
	EXPECT_EQ(watch_->stats().yara_areas_reused, 3u);
	// Four frames, each read once to fingerprint it (the areas scanned are read again for the scan).
	EXPECT_EQ(watch_->stats().frames_read, 4u);
	EXPECT_EQ(watch_->stats().frames_reused, 4u);

	// Nothing changed: nothing scanned, each frame read once.
	EXPECT_TRUE(poll().empty());
	EXPECT_EQ(watch_->stats().yara_areas_scanned, 3u);
	EXPECT_EQ(watch_->stats().yara_areas_reused, 9u);
	EXPECT_EQ(watch_->stats().frames_read, 8u);

	// The marker in the heap's last page, for pid 42 only (pid 43's page leaves the frame, as a
	// copy-on-write does).
	guest_->frames[{43, 0x602000}] = 0x900000;
	const char marker[] = "INC_MARKER_42";
	guest_->put_bytes(42, 0x602100, marker, sizeof(marker) - 1);
	std::vector<WatchEvent> events = poll();
	ASSERT_EQ(events.size(), 1u);
	EXPECT_EQ(events[0].type, SOFTDPU_APSH_WATCH_YARA_MATCH);
	EXPECT_EQ(events[0].pid, 42u);
	EXPECT_EQ(events[0].name, "inc_marker");
	EXPECT_EQ(events[0].address, 0x602000u);
	EXPECT_EQ(watch_->stats().yara_areas_scanned, 4u); // pid 42's heap only
	EXPECT_TRUE(poll().empty());
	EXPECT_EQ(watch_->stats().yara_areas_scanned, 4u);

	// pid 43's page gets the same bytes: the contents were scanned, the match is reused.
	guest_->pages[{43, 0x602000}] = guest_->pages[{42, 0x602000}];
	events = poll();
	ASSERT_EQ(events.size(), 1u);
	EXPECT_EQ(events[0].pid, 43u);
	EXPECT_EQ(events[0].address, 0x602000u);
	EXPECT_EQ(watch_->stats().yara_areas_scanned, 4u);

	// A marker across the heap's first two pages (the second one is absent): no match; once the
	// page is present, the area is scanned again, the window that holds the marker matches.
	guest_->put_bytes(42, 0x600ff8, marker, 8);
	guest_->pages.erase({42, 0x601000});
	EXPECT_TRUE(poll().empty());
	const size_t scanned = watch_->stats().yara_areas_scanned;
	guest_->put_bytes(42, 0x601000, marker + 8, sizeof(marker) - 1 - 8);
	guest_->frames[{42, 0x601000}] = 0xa00000;
	events = poll();
	EXPECT_EQ(watch_->stats().yara_areas_scanned, scanned + 1);
	const WindowSettings window = system_->system->settings().window;
	const bool whole = window.size > 4096 || window.step != 4096;
	// With 4 KiB windows on a 4 KiB grid no window holds the whole marker.
	ASSERT_EQ(events.size(), whole ? 1u : 0u) << window.size << "/" << window.step;
}

TEST_F(WatchIncremental, AttestationReadsEachFrameOncePerPoll)
{
	TempFile map_file(text_hash_map());
	watch(SOFTDPU_APSH_WATCH_KIND_ATTESTATION);
	ASSERT_TRUE(watch_->set_hash_map(map_file.path()).ok());
	EXPECT_TRUE(poll().empty());
	EXPECT_EQ(watch_->stats().frames_read, 2u); // two text frames, shared by both processes
	EXPECT_EQ(watch_->stats().frames_reused, 2u);
	EXPECT_TRUE(poll().empty());
	EXPECT_EQ(watch_->stats().frames_read, 4u);

	// A write to the shared frame itself (same frame, other bytes): both processes fail.
	const uint8_t patch = 0xcc;
	guest_->put_frame_bytes(42, 0x401010, &patch, 1);
	std::vector<WatchEvent> events = poll();
	ASSERT_EQ(events.size(), 2u);
	EXPECT_EQ(events[0].type, SOFTDPU_APSH_WATCH_ATTESTATION_FAILURE);
	EXPECT_EQ(events[0].pid, 42u);
	EXPECT_EQ(events[1].pid, 43u);
	EXPECT_EQ(events[1].address, 0x400000u);
	EXPECT_EQ(events[1].matching_pages, 1u);
	EXPECT_EQ(events[1].pages_present, 2u);
	EXPECT_TRUE(poll().empty());
}

// Attestation and YARA in one watch: each frame is read once per poll for both, and each kind
// reports what it reports alone.
TEST_F(WatchIncremental, AttestationAndYaraReadEachFrameOnceForBoth)
{
	TempFile map_file(text_hash_map());
	std::shared_ptr<YaraRules> rules;
	ASSERT_TRUE(YaraRules::compile("rule inc_marker { strings: $a = \"INC_MARKER_42\" condition: $a }", "test",
				       false, rules)
			.ok());
	watch(SOFTDPU_APSH_WATCH_KIND_ATTESTATION | SOFTDPU_APSH_WATCH_KIND_YARA | SOFTDPU_APSH_WATCH_KIND_INJECTIONS);
	ASSERT_TRUE(watch_->set_hash_map(map_file.path()).ok());
	watch_->set_yara(rules, {}, DOCA_APSH_YARA_SCAN_VMA);
	EXPECT_TRUE(poll().empty());
	EXPECT_EQ(watch_->stats().frames_read, 4u); // two text frames (digest and fingerprint), two heap
	EXPECT_TRUE(poll().empty());
	EXPECT_EQ(watch_->stats().frames_read, 8u);

	const uint8_t patch = 0xcc;
	guest_->put_frame_bytes(42, 0x401010, &patch, 1);
	const char marker[] = "INC_MARKER_42";
	guest_->put_frame_bytes(42, 0x600100, marker, sizeof(marker) - 1); // the shared heap frame: both
	std::vector<WatchEvent> events = poll();
	ASSERT_EQ(events.size(), 4u);
	EXPECT_EQ(events[0].type, SOFTDPU_APSH_WATCH_ATTESTATION_FAILURE);
	EXPECT_EQ(events[0].pid, 42u);
	EXPECT_EQ(events[1].type, SOFTDPU_APSH_WATCH_ATTESTATION_FAILURE);
	EXPECT_EQ(events[1].pid, 43u);
	EXPECT_EQ(events[1].matching_pages, 1u);
	EXPECT_EQ(events[2].type, SOFTDPU_APSH_WATCH_YARA_MATCH);
	EXPECT_EQ(events[2].pid, 42u);
	EXPECT_EQ(events[2].address, 0x600000u);
	EXPECT_EQ(events[3].type, SOFTDPU_APSH_WATCH_YARA_MATCH);
	EXPECT_EQ(events[3].pid, 43u);
	EXPECT_TRUE(poll().empty());
}

} // namespace
