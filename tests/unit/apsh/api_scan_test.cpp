// Attestation against a hash map, and YARA window scanning (built-in and user rules).
#include "api_fixture.hpp"

#include "apsh/api/exec_hash.hpp"

#include <softdpu/apsh.h>

#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <unistd.h>

using namespace apsh_test;
using namespace softdpu::apsh::api;

namespace {

// An ELF file of two pages whose first page is an executable segment.
std::vector<uint8_t> tiny_elf()
{
	std::vector<uint8_t> file(2 * 4096, 0);
	for (size_t i = 64; i < file.size(); ++i)
		file[i] = static_cast<uint8_t>(i * 7);
	const uint8_t ident[16] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
	std::memcpy(file.data(), ident, 16);
	auto put16 = [&](size_t at, uint16_t v) { std::memcpy(&file[at], &v, 2); };
	auto put32 = [&](size_t at, uint32_t v) { std::memcpy(&file[at], &v, 4); };
	auto put64 = [&](size_t at, uint64_t v) { std::memcpy(&file[at], &v, 8); };
	put64(32, 64); // phoff
	put16(54, 56); // phentsize
	put16(56, 2);  // phnum
	put32(64, 1);  // PT_LOAD, R+X, offset 0, filesz 4096
	put32(68, 5);
	put64(72, 0);
	put64(96, 4096);
	put32(120, 1); // PT_LOAD, R+W (not hashed)
	put32(124, 6);
	put64(128, 4096);
	put64(152, 4096);
	return file;
}

} // namespace

TEST(ApshExecHash, HashesExecutableSegmentsOnly)
{
	ExecHashFile file;
	auto bytes = tiny_elf();
	ASSERT_TRUE(hash_file_bytes(bytes, "/bin/tiny", file).ok());
	EXPECT_TRUE(file.elf);
	ASSERT_EQ(file.pages.size(), 1u);
	EXPECT_EQ(file.pages.begin()->first, 0u);
	EXPECT_EQ(file.pages.begin()->second, hash_page(std::span(bytes).first(4096)));
	// Round trip through the file format.
	ExecHashMap map;
	map.files.push_back(file);
	ExecHashMap parsed;
	ASSERT_TRUE(parse_exec_hash_map(format_exec_hash_map(map), "map.json", parsed).ok());
	ASSERT_EQ(parsed.files.size(), 1u);
	EXPECT_EQ(parsed.files[0].pages, file.pages);
	EXPECT_EQ(parsed.find("/bin/tiny"), &parsed.files[0]);
	EXPECT_EQ(parsed.find("/other/dir/tiny"), &parsed.files[0]) << "base name match";
	EXPECT_EQ(parsed.find("/bin/other"), nullptr);
}

TEST(ApshExecHash, RejectsBadInput)
{
	ExecHashFile file;
	auto bytes = tiny_elf();
	bytes[5] = 2; // big-endian
	EXPECT_FALSE(hash_file_bytes(bytes, "/bin/be", file).ok());
	bytes = tiny_elf();
	uint64_t huge = 1ull << 40;
	std::memcpy(&bytes[96], &huge, 8);
	Status status = hash_file_bytes(bytes, "/bin/cut", file);
	EXPECT_FALSE(status.ok());
	EXPECT_NE(status.reason.find("/bin/cut"), std::string::npos);
	// Not ELF: every page.
	std::vector<uint8_t> text(5000, 'a');
	ASSERT_TRUE(hash_file_bytes(text, "vdso", file).ok());
	EXPECT_EQ(file.pages.size(), 2u);
	ExecHashMap map;
	for (
	    const char *bad :
	    {"", "[]", "{\"format\": \"x\"}", "{\"format\": \"softdpu-exec-hash-map\", \"version\": 2}",
	     R"({"format": "softdpu-exec-hash-map", "version": 1, "files": [{"path": "a", "pages": [{"offset": 5, "sha256": ""}]}]})",
	     R"({"format": "softdpu-exec-hash-map", "version": 1, "files": [{"path": "a", "pages": [{"offset": 0, "sha256": "zz"}]}]})"})
		EXPECT_FALSE(parse_exec_hash_map(bad, "m.json", map).ok()) << bad;
}

// A map file rewritten between two attestations is read again; an unchanged one is parsed once.
TEST(ApshExecHash, MapCacheReloadsAChangedFile)
{
	char path[] = "/tmp/apsh_map_cache.XXXXXX";
	const int fd = ::mkstemp(path);
	ASSERT_GE(fd, 0);
	::close(fd);
	auto write_map = [&](const char *file_path) {
		ExecHashFile file;
		auto bytes = tiny_elf();
		ASSERT_TRUE(hash_file_bytes(bytes, file_path, file).ok());
		ExecHashMap map;
		map.files.push_back(file);
		FILE *out = std::fopen(path, "w");
		ASSERT_NE(out, nullptr);
		const std::string text = format_exec_hash_map(map);
		std::fwrite(text.data(), 1, text.size(), out);
		std::fclose(out);
	};
	write_map("/bin/first");
	ExecHashMapCache cache;
	std::shared_ptr<const ExecHashMap> a, b, c;
	ASSERT_TRUE(cache.get(path, a).ok());
	ASSERT_TRUE(cache.get(path, b).ok());
	EXPECT_EQ(a.get(), b.get()) << "an unchanged file is not parsed again";
	ASSERT_EQ(a->files.size(), 1u);
	EXPECT_EQ(a->files[0].path, "/bin/first");
	write_map("/bin/second/longer"); // another size, so the change shows even within one mtime tick
	ASSERT_TRUE(cache.get(path, c).ok());
	ASSERT_EQ(c->files.size(), 1u);
	EXPECT_EQ(c->files[0].path, "/bin/second/longer");
	EXPECT_EQ(a->files[0].path, "/bin/first") << "a map handed out stays as it was";
	::unlink(path);
	EXPECT_FALSE(cache.get(path, c).ok()) << "a map file that is gone is an error, not the cached map";
}

// Page hashes cached by frame are exactly hash_page's, also when the frame's bytes change.
TEST(ApshExecHash, PageDigestCacheHashesWhatIsThereNow)
{
	PageDigestCache cache;
	std::array<uint8_t, kPageSize> page{};
	for (size_t i = 0; i < page.size(); ++i)
		page[i] = static_cast<uint8_t>(i * 13);
	const Sha256Digest first = hash_page(page);
	EXPECT_EQ(cache.hash(0x1000, page), first);
	EXPECT_EQ(cache.hash(0x1000, page), first);
	EXPECT_EQ(cache.hash(0x2000, page), first);
	page[4095] ^= 1; // the frame now holds other bytes
	EXPECT_EQ(cache.hash(0x1000, page), hash_page(page));
	EXPECT_NE(hash_page(page), first);
	// More frames than it keeps: it starts over and stays exact.
	for (uint64_t frame = 0; frame < PageDigestCache::kMaxPages + 10; ++frame) {
		page[0] = static_cast<uint8_t>(frame);
		ASSERT_EQ(cache.hash(frame * kPageSize, page), hash_page(page)) << frame;
	}
}

// The builder of softdpu/apsh.h: what softdpu-exec-hash-build-map uses. Every documented error.
TEST(ApshExecHashMapApi, BuildsFromFilesAndReportsEachError)
{
	EXPECT_EQ(softdpu_apsh_exec_hash_map_create(nullptr), DOCA_ERROR_INVALID_VALUE);
	softdpu_apsh_exec_hash_map *map = nullptr;
	ASSERT_EQ(softdpu_apsh_exec_hash_map_create(&map), DOCA_SUCCESS);
	EXPECT_STREQ(softdpu_apsh_exec_hash_map_get_error(map), "");
	EXPECT_EQ(softdpu_apsh_exec_hash_map_get_error(nullptr), nullptr);

	char dir[] = "/tmp/softdpu-exec-hash-XXXXXX";
	ASSERT_NE(mkdtemp(dir), nullptr);
	const std::string good = std::string(dir) + "/tiny";
	const std::string bad = std::string(dir) + "/big-endian";
	const auto elf = tiny_elf();
	auto be = elf;
	be[5] = 2;
	for (const auto &[path, bytes] : {std::pair{good, elf}, std::pair{bad, be}}) {
		FILE *f = std::fopen(path.c_str(), "wb");
		ASSERT_NE(f, nullptr);
		ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
		std::fclose(f);
	}

	EXPECT_EQ(softdpu_apsh_exec_hash_map_add_file(nullptr, good.c_str(), nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_apsh_exec_hash_map_add_file(map, nullptr, nullptr), DOCA_ERROR_INVALID_VALUE);
	ASSERT_EQ(softdpu_apsh_exec_hash_map_add_file(map, good.c_str(), "/bin/tiny"), DOCA_SUCCESS);
	// Missing, a directory: IO_FAILED, the reason names the file; the map is unchanged.
	const std::string missing = std::string(dir) + "/missing";
	EXPECT_EQ(softdpu_apsh_exec_hash_map_add_file(map, missing.c_str(), nullptr), DOCA_ERROR_IO_FAILED);
	EXPECT_NE(std::string(softdpu_apsh_exec_hash_map_get_error(map)).find(missing), std::string::npos);
	EXPECT_EQ(softdpu_apsh_exec_hash_map_add_file(map, dir, nullptr), DOCA_ERROR_IO_FAILED);
	// A malformed ELF file: INVALID_VALUE.
	EXPECT_EQ(softdpu_apsh_exec_hash_map_add_file(map, bad.c_str(), nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_STRNE(softdpu_apsh_exec_hash_map_get_error(map), "");
	uint32_t files = 0;
	EXPECT_EQ(softdpu_apsh_exec_hash_map_get_num_files(nullptr, &files), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_apsh_exec_hash_map_get_num_files(map, nullptr), DOCA_ERROR_INVALID_VALUE);
	ASSERT_EQ(softdpu_apsh_exec_hash_map_get_num_files(map, &files), DOCA_SUCCESS);
	EXPECT_EQ(files, 1u);

	// The text is the map's file format: it parses back to the file's executable page.
	const char *text = nullptr;
	size_t length = 0;
	EXPECT_EQ(softdpu_apsh_exec_hash_map_format(nullptr, &text, &length), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_apsh_exec_hash_map_format(map, nullptr, &length), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_apsh_exec_hash_map_format(map, &text, nullptr), DOCA_ERROR_INVALID_VALUE);
	ASSERT_EQ(softdpu_apsh_exec_hash_map_format(map, &text, &length), DOCA_SUCCESS);
	EXPECT_EQ(std::strlen(text), length);
	ExecHashMap parsed;
	ASSERT_TRUE(parse_exec_hash_map(std::string_view(text, length), "map.json", parsed).ok());
	ASSERT_EQ(parsed.files.size(), 1u);
	EXPECT_EQ(parsed.files[0].path, "/bin/tiny");
	ASSERT_EQ(parsed.files[0].pages.size(), 1u);
	EXPECT_EQ(parsed.files[0].pages.begin()->second, hash_page(std::span(elf).first(4096)));

	// FULL once the map holds 65536 files (the same small file under other names).
	for (uint32_t i = files; i < kMaxHashMapFiles; ++i)
		ASSERT_EQ(softdpu_apsh_exec_hash_map_add_file(map, good.c_str(), ("/f" + std::to_string(i)).c_str()),
			  DOCA_SUCCESS);
	EXPECT_EQ(softdpu_apsh_exec_hash_map_add_file(map, good.c_str(), "/one-more"), DOCA_ERROR_FULL);
	ASSERT_EQ(softdpu_apsh_exec_hash_map_get_num_files(map, &files), DOCA_SUCCESS);
	EXPECT_EQ(files, kMaxHashMapFiles);

	softdpu_apsh_exec_hash_map_destroy(map);
	softdpu_apsh_exec_hash_map_destroy(nullptr);
	std::remove(good.c_str());
	std::remove(bad.c_str());
	rmdir(dir);
}

class ApshScan : public ApshApi {
protected:
	void SetUp() override
	{
		ApshApi::SetUp();
		elf_ = tiny_elf();
		// The process maps the ELF's first page at 0x400000 (text area, two pages long).
		guest_->pages[{42, 0x400000}] = std::vector<uint8_t>(elf_.begin(), elf_.begin() + 4096);
		ExecHashFile file;
		ASSERT_TRUE(hash_file_bytes(elf_, "/bin/marker_app", file).ok());
		file.pages[4096] = hash_page(std::span(elf_).subspan(4096)); // pretend the second page is code too
		ExecHashMap map;
		map.files.push_back(file);
		map_ = std::make_unique<TempFile>(format_exec_hash_map(map));
	}
	std::vector<uint8_t> elf_;
	std::unique_ptr<TempFile> map_;
};

TEST_F(ApshScan, AttestationCountsPages)
{
	start();
	doca_apsh_process *app = process(42);
	doca_apsh_attestation **attestation = nullptr;
	int n = 0;
	ASSERT_EQ(doca_apsh_attestation_get(app, map_->path(), &attestation, &n), DOCA_SUCCESS);
	ASSERT_EQ(n, 2) << "the two executable areas: text and the RWX one";
	EXPECT_STREQ(doca_apsh_attst_info_get(attestation[0], DOCA_APSH_ATTESTATION_PATH_OF_MEMORY_AREA),
		     "/bin/marker_app");
	EXPECT_TRUE(doca_apsh_attst_info_get(attestation[0], DOCA_APSH_ATTESTATION_HASH_DATA_IS_PRESENT));
	EXPECT_EQ(doca_apsh_attst_info_get(attestation[0], DOCA_APSH_ATTESTATION_PAGES_NUMBER), 2);
	EXPECT_EQ(doca_apsh_attst_info_get(attestation[0], DOCA_APSH_ATTESTATION_PAGES_PRESENT), 1);
	EXPECT_EQ(doca_apsh_attst_info_get(attestation[0], DOCA_APSH_ATTESTATION_MATCHING_HASHES), 1);
	EXPECT_EQ(doca_apsh_attst_info_get(attestation[0], DOCA_APSH_ATTESTATION_START_ADDRESS), 0x400000u);
	EXPECT_EQ(doca_apsh_attst_info_get(attestation[0], DOCA_APSH_ATTESTATION_END_ADDRESS), 0x402000u);
	EXPECT_EQ(doca_apsh_attst_info_get(attestation[0], DOCA_APSH_ATTESTATION_PID), 42u);
	EXPECT_STREQ(doca_apsh_attst_info_get(attestation[0], DOCA_APSH_ATTESTATION_COMM), "marker_app");
	EXPECT_STREQ(doca_apsh_attst_info_get(attestation[0], DOCA_APSH_ATTESTATION_PROTECTION), "r-x");
	EXPECT_FALSE(doca_apsh_attst_info_get(attestation[1], DOCA_APSH_ATTESTATION_HASH_DATA_IS_PRESENT));

	// The code changes in memory; refresh sees it, and the second page appears.
	guest_->pages[{42, 0x400000}][100] ^= 0xff;
	guest_->pages[{42, 0x401000}] = std::vector<uint8_t>(elf_.begin() + 4096, elf_.end());
	ASSERT_EQ(doca_apsh_attst_refresh(&attestation, &n), DOCA_SUCCESS);
	ASSERT_EQ(n, 2);
	EXPECT_EQ(doca_apsh_attst_info_get(attestation[0], DOCA_APSH_ATTESTATION_PAGES_PRESENT), 2);
	EXPECT_EQ(doca_apsh_attst_info_get(attestation[0], DOCA_APSH_ATTESTATION_MATCHING_HASHES), 1);
	doca_apsh_attestation_free(attestation);
}

TEST_F(ApshScan, AttestationErrors)
{
	start();
	doca_apsh_process *app = process(42);
	doca_apsh_attestation **attestation = nullptr;
	int n = 0;
	EXPECT_EQ(doca_apsh_attestation_get(nullptr, map_->path(), &attestation, &n), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_attestation_get(app, nullptr, &attestation, &n), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_attestation_get(app, "/nonexistent.json", &attestation, &n), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_attst_refresh(nullptr, &n), DOCA_ERROR_INVALID_VALUE);
	doca_apsh_attestation *bogus[1] = {nullptr};
	doca_apsh_attestation **bogus_array = bogus;
	EXPECT_EQ(doca_apsh_attst_refresh(&bogus_array, &n), DOCA_ERROR_INVALID_VALUE);
	softdpu::apsh::api::testing::fail_next_allocations(1);
	EXPECT_EQ(doca_apsh_attestation_get(app, map_->path(), &attestation, &n), DOCA_ERROR_NO_MEMORY);
	guest_->fail = {DOCA_ERROR_NOT_FOUND, "process exited"};
	EXPECT_EQ(doca_apsh_attestation_get(app, map_->path(), &attestation, &n), DOCA_ERROR_NOT_FOUND);
	guest_->fail = {DOCA_ERROR_IO_FAILED, "torn"};
	EXPECT_EQ(doca_apsh_attestation_get(app, map_->path(), &attestation, &n), DOCA_ERROR_INITIALIZATION);
	guest_->fail = {};
	ASSERT_EQ(doca_apsh_attestation_get(app, map_->path(), &attestation, &n), DOCA_SUCCESS);
	guest_->fail = {DOCA_ERROR_NOT_FOUND, "process exited"};
	EXPECT_EQ(doca_apsh_attst_refresh(&attestation, &n), DOCA_ERROR_NOT_FOUND);
	doca_apsh_attestation_free(attestation);
	EXPECT_EQ(__doca_apsh_attst_info_get(nullptr, DOCA_APSH_ATTESTATION_PID), nullptr);
}

// An exception thrown while the attestation or scan reads pages (the scan has items by then) does
// not cross extern "C": NO_MEMORY for std::bad_alloc, INITIALIZATION otherwise, and the half-built
// snapshot is freed (TearDown counts the snapshots; the ASan build checks the memory).
TEST_F(ApshScan, ExceptionsWhileReadingPagesDoNotCrossTheCApi)
{
	start();
	doca_apsh_process *app = process(42);
	ASSERT_NE(app, nullptr);
	const size_t live = softdpu::apsh::api::testing::live_snapshots();
	guest_->throw_in = "read_user_page";
	for (const bool bad_alloc : {true, false}) {
		SCOPED_TRACE(bad_alloc ? "std::bad_alloc" : "std::runtime_error");
		guest_->throw_bad_alloc = bad_alloc;
		const doca_error_t expected = bad_alloc ? DOCA_ERROR_NO_MEMORY : DOCA_ERROR_INITIALIZATION;
		doca_apsh_attestation **attestation = nullptr;
		int n = -1;
		EXPECT_EQ(doca_apsh_attestation_get(app, map_->path(), &attestation, &n), expected);
		EXPECT_EQ(attestation, nullptr);
		doca_apsh_yara_rule rule = DOCA_APSH_YARA_RULE_HELLO_WORLD;
		doca_apsh_yara **matches = nullptr;
		EXPECT_EQ(doca_apsh_yara_get(app, &rule, 1, DOCA_APSH_YARA_SCAN_VMA, &matches, &n), expected);
		EXPECT_EQ(matches, nullptr);
		EXPECT_EQ(n, -1);
		EXPECT_EQ(softdpu::apsh::api::testing::live_snapshots(), live);
	}
	// Refresh keeps the old array when the new attestation throws.
	guest_->throw_in.clear();
	doca_apsh_attestation **attestation = nullptr;
	int n = 0;
	ASSERT_EQ(doca_apsh_attestation_get(app, map_->path(), &attestation, &n), DOCA_SUCCESS);
	doca_apsh_attestation **kept = attestation;
	guest_->throw_in = "read_user_page";
	guest_->throw_bad_alloc = true;
	EXPECT_EQ(doca_apsh_attst_refresh(&attestation, &n), DOCA_ERROR_NO_MEMORY);
	EXPECT_EQ(attestation, kept);
	EXPECT_EQ(softdpu::apsh::api::testing::live_snapshots(), live + 1);
	doca_apsh_attestation_free(attestation);
	EXPECT_EQ(softdpu::apsh::api::testing::live_snapshots(), live);
}

TEST_F(ApshScan, AttestationHonoursTheHashtestLimit)
{
	ASSERT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_HASHTEST_LIMIT, 1), DOCA_SUCCESS);
	start();
	doca_apsh_attestation **attestation = nullptr;
	int n = 0;
	ASSERT_EQ(doca_apsh_attestation_get(process(42), map_->path(), &attestation, &n), DOCA_SUCCESS);
	EXPECT_EQ(n, 1);
	doca_apsh_attestation_free(attestation);
}

TEST_F(ApshScan, YaraBuiltinRulesInWindows)
{
	// "Hello World" in the heap at 0x601ff8: it straddles the page boundary at 0x602000.
	const char hello[] = "Hello World";
	guest_->put_zero_page(42, 0x600000);
	guest_->put_zero_page(42, 0x601000);
	guest_->put_zero_page(42, 0x602000);
	guest_->put_bytes(42, 0x601ff8, hello, sizeof(hello) - 1);
	const char mimi[] = "sekurlsa::logonpasswords";
	guest_->put_bytes(42, 0x700100, mimi, sizeof(mimi) - 1); // in the RWX (non-heap) area
	start();
	doca_apsh_process *app = process(42);
	doca_apsh_yara_rule rules[] = {DOCA_APSH_YARA_RULE_HELLO_WORLD, DOCA_APSH_YARA_RULE_MIMIKATZ};
	doca_apsh_yara **matches = nullptr;
	int n = 0;

	// 4 KiB windows stepping 4 KiB: the string crosses two windows, no window holds it.
	ASSERT_EQ(doca_apsh_yara_get(app, rules, 2, DOCA_APSH_YARA_SCAN_HEAP, &matches, &n), DOCA_SUCCESS);
	EXPECT_EQ(n, 0);
	EXPECT_EQ(matches, nullptr);

	// 8 KiB windows stepping 4 KiB: the window at 0x601000 holds it.
	ASSERT_EQ(doca_apsh_sys_set_scan_window_size(system_, 8192), DOCA_SUCCESS);
	ASSERT_EQ(doca_apsh_sys_set_scan_window_step(system_, 4096), DOCA_SUCCESS);
	ASSERT_EQ(doca_apsh_yara_get(app, rules, 2, DOCA_APSH_YARA_SCAN_HEAP, &matches, &n), DOCA_SUCCESS);
	ASSERT_EQ(n, 1);
	EXPECT_STREQ(doca_apsh_yara_info_get(matches[0], DOCA_APSH_YARA_RULE), "Hello_World");
	EXPECT_EQ(doca_apsh_yara_info_get(matches[0], DOCA_APSH_YARA_MATCH_WINDOW_ADDR), 0x601000u);
	EXPECT_EQ(doca_apsh_yara_info_get(matches[0], DOCA_APSH_YARA_MATCH_WINDOW_LEN), 8192u);
	EXPECT_EQ(doca_apsh_yara_info_get(matches[0], DOCA_APSH_YARA_PID), 42u);
	EXPECT_STREQ(doca_apsh_yara_info_get(matches[0], DOCA_APSH_YARA_COMM), "marker_app");
	doca_apsh_yara_free(matches);

	// All areas: Mimikatz in the RWX area too (its page is the only one there).
	ASSERT_EQ(doca_apsh_yara_get(app, rules, 2, DOCA_APSH_YARA_SCAN_VMA | DOCA_APSH_YARA_SCAN_HEAP, &matches, &n),
		  DOCA_SUCCESS);
	std::set<std::string> names;
	for (int i = 0; i < n; ++i)
		names.insert(doca_apsh_yara_info_get(matches[i], DOCA_APSH_YARA_RULE));
	EXPECT_EQ(names, (std::set<std::string>{"Hello_World", "Mimikatz"}));
	doca_apsh_yara_free(matches);

	// Only the rules asked for count.
	doca_apsh_yara_rule only_reflective[] = {DOCA_APSH_YARA_RULE_REFLECTIVE_DLL_INJECTION};
	ASSERT_EQ(doca_apsh_yara_get(app, only_reflective, 1, DOCA_APSH_YARA_SCAN_VMA, &matches, &n), DOCA_SUCCESS);
	EXPECT_EQ(n, 0);
}

TEST_F(ApshScan, YaraErrors)
{
	start();
	doca_apsh_process *app = process(42);
	doca_apsh_yara_rule rules[] = {DOCA_APSH_YARA_RULE_HELLO_WORLD};
	doca_apsh_yara **matches = nullptr;
	int n = 0;
	EXPECT_EQ(doca_apsh_yara_get(nullptr, rules, 1, DOCA_APSH_YARA_SCAN_VMA, &matches, &n),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_yara_get(app, nullptr, 1, DOCA_APSH_YARA_SCAN_VMA, &matches, &n), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_yara_get(app, rules, 0, DOCA_APSH_YARA_SCAN_VMA, &matches, &n), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_yara_get(app, rules, 1, 0, &matches, &n), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_yara_get(app, rules, 1, 8, &matches, &n), DOCA_ERROR_INVALID_VALUE);
	doca_apsh_yara_rule unknown[] = {static_cast<doca_apsh_yara_rule>(9)};
	EXPECT_EQ(doca_apsh_yara_get(app, unknown, 1, DOCA_APSH_YARA_SCAN_VMA, &matches, &n), DOCA_ERROR_INVALID_VALUE);
	guest_->fail = {DOCA_ERROR_NOT_FOUND, "exited"};
	EXPECT_EQ(doca_apsh_yara_get(app, rules, 1, DOCA_APSH_YARA_SCAN_VMA, &matches, &n), DOCA_ERROR_NOT_FOUND);
	guest_->fail = {DOCA_ERROR_IO_FAILED, "torn"};
	EXPECT_EQ(doca_apsh_yara_get(app, rules, 1, DOCA_APSH_YARA_SCAN_VMA, &matches, &n), DOCA_ERROR_INITIALIZATION);
	guest_->fail = {};
	softdpu::apsh::api::testing::fail_next_allocations(1);
	EXPECT_EQ(doca_apsh_yara_get(app, rules, 1, DOCA_APSH_YARA_SCAN_VMA, &matches, &n), DOCA_ERROR_NO_MEMORY);
	softdpu::apsh::api::testing::fail_builtin_yara_rules(true); // libyara cannot compile them
	EXPECT_EQ(doca_apsh_yara_get(app, rules, 1, DOCA_APSH_YARA_SCAN_VMA, &matches, &n), DOCA_ERROR_INITIALIZATION);
	softdpu::apsh::api::testing::fail_builtin_yara_rules(false);
	EXPECT_EQ(__doca_apsh_yara_info_get(nullptr, DOCA_APSH_YARA_PID), nullptr);
}

TEST_F(ApshScan, UserRules)
{
	const char marker[] = "SOFTDPU-MARKER-7";
	guest_->put_zero_page(42, 0x600000);
	guest_->put_bytes(42, 0x600010, marker, sizeof(marker) - 1);
	start();
	doca_apsh_user_yara_rules *rules = nullptr;
	EXPECT_EQ(doca_apsh_user_yara_rules_create_from_string("rule broken {", &rules), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_user_yara_rules_create_from_string(nullptr, &rules), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_user_yara_rules_create_from_file("/nonexistent.yar", &rules), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_user_yara_rules_set_monotonic(nullptr, true), DOCA_ERROR_INVALID_VALUE);
	TempFile file("rule Marker { strings: $m = \"SOFTDPU-MARKER-7\" condition: $m }", ".yar");
	ASSERT_EQ(doca_apsh_user_yara_rules_create_from_file(file.path(), &rules), DOCA_SUCCESS);
	doca_apsh_yara **matches = nullptr;
	int n = 0;
	for (bool monotonic : {false, true}) {
		ASSERT_EQ(doca_apsh_user_yara_rules_set_monotonic(rules, monotonic), DOCA_SUCCESS);
		ASSERT_EQ(doca_apsh_user_yara_get(process(42), rules, DOCA_APSH_YARA_SCAN_HEAP, &matches, &n),
			  DOCA_SUCCESS);
		ASSERT_EQ(n, 1);
		EXPECT_STREQ(doca_apsh_yara_info_get(matches[0], DOCA_APSH_YARA_RULE), "Marker");
		EXPECT_EQ(doca_apsh_yara_info_get(matches[0], DOCA_APSH_YARA_MATCH_WINDOW_ADDR), 0x600000u);
		doca_apsh_yara_free(matches);
	}
	EXPECT_EQ(doca_apsh_user_yara_get(process(42), nullptr, DOCA_APSH_YARA_SCAN_HEAP, &matches, &n),
		  DOCA_ERROR_INVALID_VALUE);
	doca_apsh_user_yara_rules_destroy(rules);
	doca_apsh_user_yara_rules_destroy(nullptr);
}

TEST(ApshWindowScanner, SmallStepsAndPartialRuns)
{
	std::shared_ptr<YaraRules> rules;
	ASSERT_TRUE(YaraRules::compile("rule X { strings: $x = \"XYZXYZ\" condition: $x }", "t", true, rules).ok());
	std::vector<uint8_t> page(4096, 0);
	std::memcpy(page.data() + 1000, "XYZXYZ", 6);
	// 1 KiB windows every 512 bytes; the string at 1000..1006 lies in [0, 1024) and [512, 1536) only.
	WindowScanner scanner(rules, {}, {1024, 512}, 100);
	ASSERT_TRUE(scanner
			.scan_area(0x10000, 0x11000,
				   [&](uint64_t, std::span<uint8_t, 4096> out) {
					   std::memcpy(out.data(), page.data(), 4096);
					   return true;
				   })
			.ok());
	ASSERT_EQ(scanner.hits().size(), 2u);
	EXPECT_EQ(scanner.hits()[0].window_addr, 0x10000u);
	EXPECT_EQ(scanner.hits()[1].window_addr, 0x10200u);
	// A page that is not present: its windows are skipped.
	WindowScanner absent(rules, {}, {4096, 4096}, 100);
	ASSERT_TRUE(absent.scan_area(0x10000, 0x12000, [&](uint64_t, std::span<uint8_t, 4096>) { return false; }).ok());
	EXPECT_TRUE(absent.hits().empty());
}
