// softdpu-apsh-config: writes App Shield's configuration files (docs/apsh.md formats) for a Linux
// guest, either from inside the guest (--live: BTF, kallsyms, iomem) or offline from the Debian
// kernel package (--deb, --vmlinuz, --vmlinux). Everything it writes is optional for softdpu,
// which derives the same facts from memory; the files are hints, and what DOCA's flow expects.
// Self-contained (no DOCA library) so that it can be linked statically and copied into a guest.
#include "cli_errors.hpp"

#include <nlohmann/json.hpp>

#include "common/bytes.hpp"
#include "common/regular_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <elf.h>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <spawn.h>
#include <sstream>
#include <string>
#include <string_view>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char **environ;

namespace {

using softdpu::common::hex;
using softdpu::common::load_le;
using softdpu::common::parse_hex;

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json; // keys in the documented order

constexpr const char *kUsage =
    "Modes:\n"
    "  softdpu-apsh-config --live [--root DIR] [-o DIR] [--all-symbols]\n"
    "  softdpu-apsh-config --deb PKG.deb [-o DIR] [--all-symbols]\n"
    "  softdpu-apsh-config --vmlinuz FILE | --vmlinux FILE [--system-map FILE] [-o DIR] [--all-symbols]\n"
    "\n"
    "Writes App Shield's configuration files into DIR (default: the current directory):\n"
    "  symbols.json      symbol map (format softdpu-symbol-map) -> doca_apsh_sys_os_symbol_map_set\n"
    "  vmlinux.btf       the kernel's BTF, referenced by symbols.json\n"
    "  mem_regions.json  System RAM ranges (live only)         -> doca_apsh_sys_mem_region_set\n"
    "  kpgd_file.conf    kernel page table + init_task (live only, when derivable) -> doca_apsh_sys_kpgd_file_set\n"
    "\n"
    "--live        run inside the guest, as root: reads /sys/kernel/btf/vmlinux, /proc/kallsyms,\n"
    "              /proc/iomem and /proc/sys/kernel/osrelease (under --root DIR when given)\n"
    "--deb PKG     a linux-image-*.deb: its boot/vmlinuz-* and boot/System.map-* (needs dpkg-deb, tar)\n"
    "--vmlinuz F   a bzImage (xz, zstd, gzip, lz4, lzma, bzip2 or lzo payload; needs the decompressor)\n"
    "--vmlinux F   an uncompressed kernel ELF\n"
    "--system-map F  link-time symbols (System.map) to add in offline modes\n"
    "--all-symbols write every symbol, not only those App Shield and common tools use\n"
    "\n"
    "Offline files hold link-time addresses (\"slid\": false): the KASLR slide, the RAM layout and the\n"
    "page table exist only in a running guest, so App Shield finds them in memory.\n";

// Symbols App Shield's reader looks up, and ones other introspection tools commonly need.
const char *const kUsefulSymbols[] = {"_text",
				      "_stext",
				      "_etext",
				      "linux_banner",
				      "init_task",
				      "init_top_pgt",
				      "swapper_pg_dir",
				      "init_mm",
				      "init_files",
				      "init_net",
				      "modules",
				      "phys_base",
				      "page_offset_base",
				      "vmalloc_base",
				      "vmemmap_base",
				      "__start_BTF",
				      "__stop_BTF",
				      "socket_file_ops",
				      "special_mapping_vmops",
				      "vmcoreinfo_note",
				      "kallsyms_names",
				      "kallsyms_num_syms",
				      "kallsyms_offsets",
				      "kallsyms_relative_base",
				      "kallsyms_token_table",
				      "kallsyms_token_index",
				      "kallsyms_markers",
				      "sys_call_table",
				      "idt_table",
				      "mem_section",
				      "prb",
				      "log_buf",
				      "pid_hash",
				      "init_pid_ns",
				      "init_uts_ns",
				      "jiffies",
				      "init_ipc_ns",
				      "nr_threads"};

constexpr uint64_t kStartKernelMap = 0xffffffff80000000ull;
constexpr size_t kMaxTextFile = 256u << 20; // kallsyms of a big kernel is ~10 MB

struct Failure {
	std::string message;
};

[[noreturn]] void fail(const std::string &message)
{
	throw Failure{message};
}

// Whole files of the host or guest (regular files only: a FIFO or device named by mistake is
// refused, never opened to block).
std::string read_file(const fs::path &path, size_t max_bytes = kMaxTextFile)
{
	std::string data, error;
	if (!softdpu::common::read_small_file(path.string(), max_bytes, "softdpu-apsh-config", data, error))
		fail(path.string() + ": " + error);
	return data;
}

void write_file(const fs::path &path, std::string_view data)
{
	const fs::path temporary = path.string() + ".tmp";
	{
		std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
		if (!out)
			fail(temporary.string() + ": cannot create: " + std::strerror(errno));
		out.write(data.data(), static_cast<std::streamsize>(data.size()));
		if (!out.flush())
			fail(temporary.string() + ": write error");
	}
	std::error_code ec;
	fs::rename(temporary, path, ec);
	if (ec)
		fail(path.string() + ": " + ec.message());
}

std::vector<std::string_view> split_lines(std::string_view text)
{
	std::vector<std::string_view> lines;
	while (!text.empty()) {
		const size_t end = text.find('\n');
		lines.push_back(text.substr(0, end));
		if (end == std::string_view::npos)
			break;
		text.remove_prefix(end + 1);
	}
	return lines;
}

// ---------------------------------------------------------------------------------------------
// Symbol tables: /proc/kallsyms and System.map share the "ADDRESS TYPE NAME" line format.

using Symbols = std::map<std::string, uint64_t>;

// Kernel-image symbols only: kallsyms lines of modules end in "\t[module]" and are skipped. The
// first address of a name wins (duplicates are local symbols of different files).
Symbols parse_symbol_lines(std::string_view text, const std::string &origin, bool &all_zero)
{
	Symbols symbols;
	all_zero = true;
	size_t line_number = 0;
	for (std::string_view line : split_lines(text)) {
		++line_number;
		if (line.empty())
			continue;
		if (line.find('[') != std::string_view::npos)
			continue; // a module's symbol
		const size_t first = line.find(' ');
		const size_t second = first == std::string_view::npos ? first : line.find(' ', first + 1);
		if (second == std::string_view::npos)
			fail(origin + ": line " + std::to_string(line_number) + ": expected \"ADDRESS TYPE NAME\"");
		auto address = parse_hex(line.substr(0, first));
		if (!address)
			fail(origin + ": line " + std::to_string(line_number) + ": bad address \"" +
			     std::string(line.substr(0, first)) + "\"");
		std::string_view name = line.substr(second + 1);
		if (const size_t tab = name.find('\t'); tab != std::string_view::npos)
			name = name.substr(0, tab);
		if (name.empty() || name.find(' ') != std::string_view::npos)
			continue; // e.g. Debian's stub System.map: "ffffffffffffffff B The real System.map is in ..."
		if (*address != 0)
			all_zero = false;
		symbols.emplace(std::string(name), *address);
	}
	if (symbols.empty())
		fail(origin + ": no symbols");
	return symbols;
}

Symbols select_symbols(const Symbols &all, bool everything)
{
	if (everything)
		return all;
	Symbols chosen;
	for (const char *name : kUsefulSymbols)
		if (auto it = all.find(name); it != all.end())
			chosen.insert(*it);
	return chosen;
}

// ---------------------------------------------------------------------------------------------
// /proc/iomem: top-level "System RAM" ranges and the "Kernel code" range nested in one of them.

struct Range {
	uint64_t start = 0;
	uint64_t end = 0; // inclusive, as iomem prints it
};

struct Iomem {
	std::vector<Range> system_ram;
	std::optional<Range> kernel_code;
	bool all_zero = true;
};

Iomem parse_iomem(std::string_view text, const std::string &origin)
{
	Iomem iomem;
	size_t line_number = 0;
	for (std::string_view line : split_lines(text)) {
		++line_number;
		if (line.empty())
			continue;
		const bool nested = line.front() == ' ';
		const size_t begin = line.find_first_not_of(' ');
		const size_t dash = line.find('-', begin);
		const size_t colon = line.find(" : ", begin);
		if (dash == std::string_view::npos || colon == std::string_view::npos || dash > colon)
			fail(origin + ": line " + std::to_string(line_number) + ": expected \"START-END : NAME\"");
		auto start = parse_hex(line.substr(begin, dash - begin));
		auto end = parse_hex(line.substr(dash + 1, colon - dash - 1));
		if (!start || !end || *end < *start)
			fail(origin + ": line " + std::to_string(line_number) + ": bad range");
		if (*start != 0 || *end != 0)
			iomem.all_zero = false;
		const std::string_view name = line.substr(colon + 3);
		if (!nested && name == "System RAM")
			iomem.system_ram.push_back({*start, *end});
		else if (nested && name == "Kernel code" && !iomem.kernel_code)
			iomem.kernel_code = Range{*start, *end};
	}
	return iomem;
}

// ---------------------------------------------------------------------------------------------
// ELF64 (the uncompressed kernel): sections by name, bytes at a virtual address.

// A little-endian T (an integer or an <elf.h> structure) at `offset`; a short file is an error.
template <typename T> T load(std::string_view data, size_t offset)
{
	if (offset > data.size() || data.size() - offset < sizeof(T))
		fail("truncated ELF file");
	return load_le<T>(reinterpret_cast<const uint8_t *>(data.data()) + offset);
}

struct Section {
	std::string name;
	uint32_t name_offset = 0; // in the section name table
	uint32_t type = 0;
	uint64_t address = 0;
	uint64_t offset = 0;
	uint64_t size = 0;
	uint32_t link = 0;
	uint64_t entry_size = 0;
};

class Elf {
public:
	Elf(std::string data, std::string origin) : data_(std::move(data)), origin_(std::move(origin))
	{
		if (data_.size() < sizeof(Elf64_Ehdr) || data_.compare(0, SELFMAG, ELFMAG) != 0)
			fail(origin_ + ": not an ELF file");
		const auto header = load<Elf64_Ehdr>(data_, 0);
		if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB)
			fail(origin_ + ": not a 64-bit little-endian ELF file");
		if (header.e_machine != EM_X86_64)
			fail(origin_ + ": not an x86-64 kernel");
		const uint16_t count = header.e_shnum;
		const uint16_t names_index = header.e_shstrndx;
		if (header.e_shentsize != sizeof(Elf64_Shdr) || names_index >= count)
			fail(origin_ + ": bad section header table");
		for (uint16_t i = 0; i < count; ++i) {
			const auto shdr = load<Elf64_Shdr>(data_, header.e_shoff + size_t{i} * sizeof(Elf64_Shdr));
			Section section;
			section.type = shdr.sh_type;
			section.address = shdr.sh_addr;
			section.offset = shdr.sh_offset;
			section.size = shdr.sh_size;
			section.link = shdr.sh_link;
			section.entry_size = shdr.sh_entsize;
			section.name_offset = shdr.sh_name; // resolved below
			if (section.type != SHT_NOBITS &&
			    (section.offset > data_.size() || section.size > data_.size() - section.offset))
				fail(origin_ + ": section " + std::to_string(i) + " lies outside the file");
			sections_.push_back(section);
		}
		const Section &names = sections_[names_index];
		for (Section &section : sections_) {
			section.name =
			    section.name_offset < names.size ? c_string(names.offset + section.name_offset) : "";
		}
	}

	const Section *section(std::string_view name) const
	{
		for (const Section &section : sections_)
			if (section.name == name)
				return &section;
		return nullptr;
	}

	std::string_view bytes(const Section &section) const
	{
		if (section.type == SHT_NOBITS)
			return {};
		return std::string_view(data_).substr(section.offset, section.size);
	}

	std::string c_string(uint64_t offset) const
	{
		if (offset >= data_.size())
			return {};
		const size_t end = data_.find('\0', offset);
		return data_.substr(offset, (end == std::string::npos ? data_.size() : end) - offset);
	}

	// The file offset of a virtual address inside an allocated section.
	std::optional<uint64_t> file_offset(uint64_t address) const
	{
		for (const Section &section : sections_)
			if (section.type != SHT_NOBITS && section.address != 0 && address >= section.address &&
			    address - section.address < section.size)
				return section.offset + (address - section.address);
		return std::nullopt;
	}

	const std::vector<Section> &sections() const { return sections_; }
	const std::string &data() const { return data_; }
	const std::string &origin() const { return origin_; }

private:
	std::string data_;
	std::string origin_;
	std::vector<Section> sections_;
};

// Exported symbols from __ksymtab / __ksymtab_gpl: with CONFIG_HAVE_ARCH_PREL32_RELOCATIONS
// (x86-64) each entry is three s32 offsets (value, name, namespace), each relative to its own field.
void add_ksymtab(const Elf &elf, Symbols &symbols)
{
	for (const char *table_name : {"__ksymtab", "__ksymtab_gpl"}) {
		const Section *table = elf.section(table_name);
		if (table == nullptr || table->size % 12 != 0)
			continue;
		const std::string_view bytes = elf.bytes(*table);
		for (uint64_t at = 0; at + 12 <= bytes.size(); at += 12) {
			const uint64_t entry = table->address + at;
			const int32_t value_offset = load<int32_t>(bytes, at);
			const int32_t name_offset = load<int32_t>(bytes, at + 4);
			const uint64_t value = entry + static_cast<uint64_t>(static_cast<int64_t>(value_offset));
			const uint64_t name_address =
			    entry + 4 + static_cast<uint64_t>(static_cast<int64_t>(name_offset));
			auto name_at = elf.file_offset(name_address);
			if (!name_at)
				continue;
			std::string name = elf.c_string(*name_at);
			if (!name.empty() && name.size() < 256)
				symbols.emplace(std::move(name), value);
		}
	}
}

// An unstripped vmlinux (a kernel built by hand) carries .symtab: every symbol.
void add_symtab(const Elf &elf, Symbols &symbols)
{
	const Section *table = elf.section(".symtab");
	if (table == nullptr || table->entry_size != sizeof(Elf64_Sym) || table->link >= elf.sections().size())
		return;
	const Section &names = elf.sections()[table->link];
	const std::string_view bytes = elf.bytes(*table);
	for (uint64_t at = 0; at + sizeof(Elf64_Sym) <= bytes.size(); at += sizeof(Elf64_Sym)) {
		const auto symbol = load<Elf64_Sym>(bytes, at);
		const uint32_t name = symbol.st_name;
		const uint64_t value = symbol.st_value;
		const unsigned type = ELF64_ST_TYPE(symbol.st_info);
		if (name == 0 || name >= names.size || value == 0 ||
		    (type != STT_NOTYPE && type != STT_OBJECT && type != STT_FUNC))
			continue;
		symbols.emplace(elf.c_string(names.offset + name), value);
	}
}

// The release from the "Linux version <release> (...)" banner in the image.
std::string release_from_banner(std::string_view data)
{
	static constexpr std::string_view prefix = "Linux version ";
	for (size_t at = data.find(prefix); at != std::string_view::npos; at = data.find(prefix, at + 1)) {
		const size_t start = at + prefix.size();
		size_t end = start;
		while (end < data.size() && end - start < 64 && data[end] > ' ' && data[end] < 0x7f)
			++end;
		// The real banner continues with " (builder@host)"; format strings contain "%s".
		if (end > start && end + 2 < data.size() && data[end] == ' ' && data[end + 1] == '(' &&
		    data.substr(start, end - start).find('%') == std::string_view::npos)
			return std::string(data.substr(start, end - start));
	}
	return {};
}

// ---------------------------------------------------------------------------------------------
// External tools (decompressors, dpkg-deb, tar), run without a shell.

struct TempDir {
	fs::path path;
	TempDir()
	{
		std::string pattern = (fs::temp_directory_path() / "softdpu-apsh-config.XXXXXX").string();
		if (::mkdtemp(pattern.data()) == nullptr)
			fail("cannot create a temporary directory: " + std::string(std::strerror(errno)));
		path = pattern;
	}
	~TempDir()
	{
		std::error_code ec;
		fs::remove_all(path, ec);
	}
};

// Starts argv with stdin/stdout redirected to files or descriptors (empty / -1: inherited);
// fds_to_close are closed in the child (the other ends of pipes).
pid_t start_tool(const std::vector<std::string> &argv, const std::string &stdin_path, const std::string &stdout_path,
		 int stdin_fd = -1, int stdout_fd = -1, std::initializer_list<int> fds_to_close = {})
{
	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	if (!stdin_path.empty())
		posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, stdin_path.c_str(), O_RDONLY, 0);
	if (!stdout_path.empty())
		posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, stdout_path.c_str(),
						 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (stdin_fd >= 0)
		posix_spawn_file_actions_adddup2(&actions, stdin_fd, STDIN_FILENO);
	if (stdout_fd >= 0)
		posix_spawn_file_actions_adddup2(&actions, stdout_fd, STDOUT_FILENO);
	for (int fd : fds_to_close)
		posix_spawn_file_actions_addclose(&actions, fd);
	std::vector<char *> args;
	args.reserve(argv.size() + 1);
	for (const std::string &arg : argv)
		args.push_back(const_cast<char *>(arg.c_str()));
	args.push_back(nullptr);
	pid_t pid = 0;
	const int error = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
	posix_spawn_file_actions_destroy(&actions);
	if (error != 0)
		fail("cannot run " + argv[0] + ": " + std::strerror(error) + " (is it installed?)");
	return pid;
}

int wait_tool(pid_t pid)
{
	int status = 0;
	while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int run_tool(const std::vector<std::string> &argv, const std::string &stdin_path, const std::string &stdout_path)
{
	return wait_tool(start_tool(argv, stdin_path, stdout_path));
}

// The kernel ELF inside a bzImage: the setup header says where the compressed payload is.
std::string vmlinux_from_bzimage(const std::string &image, const std::string &origin, const TempDir &temp)
{
	if (image.size() < 0x260 || image.compare(0x202, 4, "HdrS") != 0)
		fail(origin + ": not a bzImage (no \"HdrS\" setup header)");
	const uint16_t version = load<uint16_t>(image, 0x206);
	if (version < 0x208)
		fail(origin + ": boot protocol " + hex(version) + " has no payload fields (older than 2.08)");
	uint8_t setup_sects = load<uint8_t>(image, 0x1f1);
	if (setup_sects == 0)
		setup_sects = 4;
	const uint64_t payload_offset = load<uint32_t>(image, 0x248);
	const uint64_t payload_length = load<uint32_t>(image, 0x24c);
	const uint64_t start = (uint64_t{setup_sects} + 1) * 512 + payload_offset;
	if (payload_length == 0 || start > image.size() || payload_length > image.size() - start)
		fail(origin + ": payload outside the file");
	const std::string_view payload = std::string_view(image).substr(start, payload_length);
	struct Format {
		std::string_view magic;
		std::vector<std::string> tool;
	};
	const Format formats[] = {
	    {std::string_view("\xfd"
			      "7zXZ\0",
			      6),
	     {"xz", "-dc", "--single-stream"}},
	    {"\x28\xb5\x2f\xfd", {"zstd", "-dcq"}},
	    {"\x1f\x8b", {"gzip", "-dc"}},
	    {"\x02\x21\x4c\x18", {"lz4", "-dc"}},
	    {std::string_view("\x5d\x00\x00", 3), {"xz", "--format=lzma", "-dc"}},
	    {"BZh", {"bzip2", "-dc"}},
	    {"\x89LZO", {"lzop", "-dc"}},
	};
	for (const Format &format : formats) {
		if (!payload.starts_with(format.magic))
			continue;
		const fs::path compressed = temp.path / "payload";
		const fs::path elf = temp.path / "vmlinux";
		write_file(compressed, payload);
		const int status = run_tool(format.tool, compressed.string(), elf.string());
		std::error_code ec;
		// Decompressors may complain about the size trailer after the stream; the ELF decides.
		std::string data = fs::exists(elf, ec) ? read_file(elf, 1u << 30) : std::string();
		if (data.compare(0, 4,
				 "\x7f"
				 "ELF") != 0)
			fail(origin + ": " + format.tool[0] + " did not produce an ELF kernel (exit status " +
			     std::to_string(status) + ")");
		return data;
	}
	fail(origin + ": unknown payload compression (magic " + hex(static_cast<uint8_t>(payload[0])) + ")");
}

struct DebFiles {
	fs::path vmlinuz;
	std::optional<fs::path> system_map;
	std::string release;
};

DebFiles unpack_deb(const std::string &deb, const TempDir &temp)
{
	{
		softdpu::common::OpenedFile file;
		std::string error;
		if (!softdpu::common::open_data_file(deb, softdpu::common::FileKinds::regular, file, error))
			fail(deb + ": " + error);
		char magic[8] = {};
		if (::read(file.fd.get(), magic, sizeof(magic)) != sizeof(magic) ||
		    std::string_view(magic, 8) != "!<arch>\n")
			fail(deb + ": not a Debian package (no ar archive header)");
	}
	// dpkg-deb --fsys-tarfile PKG | tar -x ./boot: only the boot files, not 400 MB of modules.
	const fs::path root = temp.path / "root";
	fs::create_directories(root);
	int pipe_fds[2];
	if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
		fail("pipe: " + std::string(std::strerror(errno)));
	pid_t unpacker = -1, extractor = -1;
	try {
		unpacker = start_tool({"dpkg-deb", "--fsys-tarfile", deb}, "", "", -1, pipe_fds[1], {pipe_fds[0]});
		extractor = start_tool({"tar", "-x", "-C", root.string(), "--wildcards", "./boot/*"}, "", "",
				       pipe_fds[0], -1, {pipe_fds[1]});
	} catch (const Failure &) {
		::close(pipe_fds[0]);
		::close(pipe_fds[1]);
		if (unpacker > 0)
			wait_tool(unpacker);
		throw;
	}
	::close(pipe_fds[0]);
	::close(pipe_fds[1]);
	const int unpack_status = wait_tool(unpacker);
	wait_tool(extractor); // tar fails when nothing matched; the missing vmlinuz says so below
	if (unpack_status != 0)
		fail(deb + ": dpkg-deb --fsys-tarfile failed (exit status " + std::to_string(unpack_status) + ")");
	std::error_code ec;
	DebFiles files;
	for (const auto &entry : fs::directory_iterator(root / "boot", ec)) {
		const std::string name = entry.path().filename().string();
		if (name.starts_with("vmlinuz-")) {
			files.vmlinuz = entry.path();
			files.release = name.substr(8);
		} else if (name.starts_with("System.map-"))
			files.system_map = entry.path();
	}
	if (files.vmlinuz.empty())
		fail(deb + ": no ./boot/vmlinuz-* in the package (not a linux-image package?)");
	return files;
}

// ---------------------------------------------------------------------------------------------
// Output

struct Output {
	fs::path dir = ".";
	std::vector<std::string> written;
	std::vector<std::string> omitted;

	void symbol_map(const std::string &release, bool slid, const Symbols &symbols, bool with_btf)
	{
		Json map = {{"format", "softdpu-symbol-map"}, {"version", 1}};
		if (!release.empty())
			map["kernel"] = release;
		map["slid"] = slid;
		Json entries = Json::object();
		for (const auto &[name, address] : symbols)
			entries[name] = hex(address);
		map["symbols"] = std::move(entries);
		if (with_btf)
			map["btf"] = "vmlinux.btf";
		write_file(dir / "symbols.json", map.dump(2) + "\n");
		written.push_back("symbols.json (" + std::to_string(symbols.size()) + " symbols, " +
				  (slid ? "running addresses" : "link-time addresses") + ")");
	}

	void btf(std::string_view blob)
	{
		write_file(dir / "vmlinux.btf", blob);
		written.push_back("vmlinux.btf (" + std::to_string(blob.size()) + " bytes)");
	}

	void regions(const std::vector<Range> &ranges)
	{
		Json allowed = Json::object();
		for (size_t i = 0; i < ranges.size(); ++i)
			allowed[std::to_string(i)] = {{"start", ranges[i].start},
						      {"length", ranges[i].end - ranges[i].start + 1}};
		write_file(dir / "mem_regions.json", Json{{"allowed_regions", allowed}}.dump(2) + "\n");
		written.push_back("mem_regions.json (" + std::to_string(ranges.size()) + " System RAM ranges)");
	}

	void kpgd(uint64_t page_table, std::optional<uint64_t> init_task)
	{
		std::string text = hex(page_table) + "\n";
		if (init_task)
			text += hex(*init_task) + "\n";
		write_file(dir / "kpgd_file.conf", text);
		written.push_back("kpgd_file.conf (" + hex(page_table) + ")");
	}

	void report() const
	{
		std::printf("wrote to %s:\n", dir.c_str());
		for (const std::string &line : written)
			std::printf("  %s\n", line.c_str());
		for (const std::string &line : omitted)
			std::printf("  not written: %s\n", line.c_str());
	}
};

struct Options {
	enum class Mode { none, live, deb, vmlinuz, vmlinux } mode = Mode::none;
	std::string input;
	fs::path root = "/";
	std::string system_map;
	bool all_symbols = false;
	fs::path out = ".";
};

void run_live(const Options &options, Output &out)
{
	const fs::path root = options.root;
	bool hidden = false;
	const std::string kallsyms_path = (root / "proc/kallsyms").string();
	const Symbols all = parse_symbol_lines(read_file(kallsyms_path), kallsyms_path, hidden);
	if (hidden)
		fail(kallsyms_path + ": every address is 0 (kptr_restrict): run as root, or set "
				     "/proc/sys/kernel/kptr_restrict to 0");
	std::string release;
	{
		std::error_code ec;
		const fs::path osrelease = root / "proc/sys/kernel/osrelease";
		if (fs::exists(osrelease, ec)) {
			release = read_file(osrelease, 4096);
			while (!release.empty() && (release.back() == '\n' || release.back() == ' '))
				release.pop_back();
		}
	}
	const fs::path btf_path = root / "sys/kernel/btf/vmlinux";
	std::error_code ec;
	const bool have_btf = fs::exists(btf_path, ec);
	if (have_btf)
		out.btf(read_file(btf_path, 64u << 20));
	else
		out.omitted.push_back(
		    "vmlinux.btf: " + btf_path.string() +
		    " is missing (kernel without CONFIG_DEBUG_INFO_BTF); App Shield reads BTF from memory");
	out.symbol_map(release, true, select_symbols(all, options.all_symbols), have_btf);

	const std::string iomem_path = (root / "proc/iomem").string();
	const Iomem iomem = parse_iomem(read_file(iomem_path), iomem_path);
	if (iomem.all_zero) {
		out.omitted.push_back("mem_regions.json, kpgd_file.conf: " + iomem_path +
				      " shows no addresses (not root?)");
		return;
	}
	if (iomem.system_ram.empty())
		out.omitted.push_back("mem_regions.json: no \"System RAM\" line in " + iomem_path);
	else
		out.regions(iomem.system_ram);
	// "Kernel code" starts at the physical address of _text, so any kernel-image symbol's
	// physical address is that start plus its distance from _text.
	auto text = all.find("_text");
	auto top = all.find("init_top_pgt");
	if (top == all.end())
		top = all.find("swapper_pg_dir");
	if (!iomem.kernel_code || text == all.end() || top == all.end() || top->second < text->second ||
	    text->second < kStartKernelMap) {
		out.omitted.push_back("kpgd_file.conf: needs \"Kernel code\" in iomem and _text, init_top_pgt in "
				      "kallsyms (App Shield finds the page table in memory)");
		return;
	}
	const uint64_t page_table = iomem.kernel_code->start + (top->second - text->second);
	std::optional<uint64_t> init_task;
	if (auto it = all.find("init_task"); it != all.end())
		init_task = it->second;
	out.kpgd(page_table, init_task);
}

void run_offline(const Options &options, Output &out)
{
	TempDir temp;
	std::string release;
	std::optional<fs::path> system_map;
	std::string vmlinux;
	std::string origin = options.input;
	if (!options.system_map.empty())
		system_map = options.system_map;
	if (options.mode == Options::Mode::deb) {
		DebFiles files = unpack_deb(options.input, temp);
		release = files.release;
		if (!system_map)
			system_map = files.system_map;
		origin = options.input + ":" + files.vmlinuz.filename().string();
		vmlinux = vmlinux_from_bzimage(read_file(files.vmlinuz, 256u << 20), origin, temp);
	} else {
		std::string image = read_file(options.input, 1u << 30);
		if (options.mode == Options::Mode::vmlinuz && image.compare(0, 4,
									    "\x7f"
									    "ELF") != 0)
			vmlinux = vmlinux_from_bzimage(image, origin, temp);
		else
			vmlinux = std::move(image);
	}
	const Elf elf(std::move(vmlinux), origin);
	if (release.empty()) {
		if (const Section *rodata = elf.section(".rodata"))
			release = release_from_banner(elf.bytes(*rodata));
	}
	Symbols all;
	bool real_system_map = false;
	if (system_map) {
		const std::string text = read_file(*system_map);
		if (text.find("System.map is in") != std::string::npos && text.size() < 4096) {
			out.omitted.push_back("System.map symbols: " + system_map->filename().string() +
					      " is Debian's stub (the real one is in the -dbg package, not used)");
		} else {
			bool all_zero = false;
			all = parse_symbol_lines(text, system_map->string(), all_zero);
			real_system_map = true;
		}
	}
	add_symtab(elf, all);
	add_ksymtab(elf, all);
	const Section *btf = elf.section(".BTF");
	if (btf != nullptr && btf->size > 0)
		out.btf(elf.bytes(*btf));
	else
		out.omitted.push_back("vmlinux.btf: the kernel has no .BTF section (CONFIG_DEBUG_INFO_BTF off)");
	if (all.empty() && (btf == nullptr || btf->size == 0))
		fail(origin + ": neither symbols nor BTF found; nothing to write");
	out.symbol_map(release, false, select_symbols(all, options.all_symbols), btf != nullptr && btf->size > 0);
	if (!real_system_map && !elf.section(".symtab"))
		out.omitted.push_back("non-exported symbols (linux_banner, init_top_pgt, ...): the image is stripped; "
				      "give --system-map, or rely on the guest's VMCOREINFO and kallsyms");
	out.omitted.push_back("mem_regions.json, kpgd_file.conf: the RAM layout and the page table's physical "
			      "address exist only in a running guest (--live, or App Shield's zero-config)");
}

// Parses with CLI11 (cli_errors.hpp); returns an exit status when the program is to stop now
// (--help, --version: 0; a usage error: 2).
std::optional<int> parse_options(int argc, char **argv, Options &options)
{
	CLI::App app{"Writes App Shield's configuration files for a Linux guest.", "softdpu-apsh-config"};
	app.set_version_flag("--version", "softdpu-apsh-config " SOFTDPU_VERSION);
	app.footer(kUsage);
	std::string deb, vmlinuz, vmlinux, root, output;
	bool live = false;
	app.add_flag("--live", live, "run inside the guest, as root");
	app.add_option("--deb", deb, "a linux-image-*.deb")->type_name("PKG");
	app.add_option("--vmlinuz", vmlinuz, "a bzImage")->type_name("FILE");
	app.add_option("--vmlinux", vmlinux, "an uncompressed kernel ELF")->type_name("FILE");
	app.add_option("--root", root, "--live: read the guest's files under DIR")->type_name("DIR");
	app.add_option("--system-map", options.system_map, "offline modes: link-time symbols (System.map)")
	    ->type_name("FILE");
	app.add_flag("--all-symbols", options.all_symbols, "write every symbol");
	app.add_option("-o,--output", output, "where to write the files (default: the current directory)")
	    ->type_name("DIR");
	if (int status = softdpu::cli::parse_command_line(app, argc, argv); status >= 0)
		return status;
	auto usage_error = [](const std::string &message) {
		return std::optional<int>(softdpu::cli::usage_failure("softdpu-apsh-config", message));
	};
	const int modes = int(live) + int(!deb.empty()) + int(!vmlinuz.empty()) + int(!vmlinux.empty());
	if (modes == 0)
		return usage_error("give one of --live, --deb, --vmlinuz, --vmlinux");
	if (modes > 1)
		return usage_error("give exactly one of --live, --deb, --vmlinuz, --vmlinux");
	options.mode = live               ? Options::Mode::live
		       : !deb.empty()     ? Options::Mode::deb
		       : !vmlinuz.empty() ? Options::Mode::vmlinuz
					  : Options::Mode::vmlinux;
	options.input = live ? "" : !deb.empty() ? deb : !vmlinuz.empty() ? vmlinuz : vmlinux;
	if (!root.empty())
		options.root = root;
	if (!output.empty())
		options.out = output;
	if (options.mode != Options::Mode::live && !root.empty())
		return usage_error("--root only goes with --live");
	if (options.mode == Options::Mode::live && !options.system_map.empty())
		return usage_error("--system-map only goes with the offline modes");
	return std::nullopt;
}

} // namespace

static int run(int argc, char **argv)
{
	Options options;
	if (std::optional<int> status = parse_options(argc, argv, options))
		return *status;
	Output out;
	out.dir = options.out;
	try {
		std::error_code ec;
		fs::create_directories(out.dir, ec);
		if (!fs::is_directory(out.dir, ec))
			fail(out.dir.string() + ": not a directory");
		if (options.mode == Options::Mode::live)
			run_live(options, out);
		else
			run_offline(options, out);
	} catch (const Failure &failure) {
		std::fprintf(stderr, "softdpu-apsh-config: %s\n", failure.message.c_str());
		return 1;
	} catch (const std::exception &error) {
		std::fprintf(stderr, "softdpu-apsh-config: %s\n", error.what());
		return 1;
	}
	out.report();
	return 0;
}

int main(int argc, char **argv)
{
	return softdpu::cli::run_main("softdpu-apsh-config", run, argc, argv);
}
