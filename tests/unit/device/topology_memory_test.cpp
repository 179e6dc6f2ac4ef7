// App Shield memory sources on representors: the topology's optional "memory" object and the
// SOFTDPU_APSH_MEMORY override (docs/topology.md, docs/apsh.md).
#include "device/topology.hpp"
#include "support/scoped_env.h"

#include <gtest/gtest.h>

#include <string>

using namespace softdpu::device;

namespace {

std::string document(const std::string &memory)
{
	return R"({
  "host": { "functions": [
    { "name": "pf0", "type": "pf", "pci": "0b:00.0", "ibdev": "mlx5_0", "vuid": "H0" } ] },
  "dpu": { "functions": [
    { "name": "p0", "type": "pf", "pci": "03:00.0", "ibdev": "mlx5_0", "vuid": "D0" } ],
    "representors": [ { "name": "hpf0", "manager": "p0", "function": "pf0")" +
	       (memory.empty() ? std::string() : ", \"memory\": " + memory) + R"( } ] }
})";
}

} // namespace

using softdpu_test::ScopedEnv;

TEST(TopologyMemory, AbsentByDefault)
{
	auto result = Topology::parse(document(""), "t", Side::dpu);
	ASSERT_TRUE(result.topology) << result.error;
	EXPECT_FALSE(result.topology->find_representor("hpf0")->memory.has_value());
	auto builtin = Topology::builtin_default(Side::dpu);
	ASSERT_TRUE(builtin.topology);
	for (const auto &rep : builtin.topology->representors())
		EXPECT_FALSE(rep->memory.has_value()) << rep->name;
}

TEST(TopologyMemory, ParsesEveryKind)
{
	for (const char *kind : {"auto", "qemu_shared_ram", "raw", "elf_core", "lime"}) {
		auto result = Topology::parse(
		    document(std::string(R"({"kind": ")") + kind + R"(", "path": "/tmp/guest.ram"})"), "t", Side::dpu);
		ASSERT_TRUE(result.topology) << result.error;
		const auto &memory = result.topology->find_representor("hpf0")->memory;
		ASSERT_TRUE(memory.has_value());
		EXPECT_STREQ(to_string(memory->kind), kind);
		EXPECT_EQ(memory->path, "/tmp/guest.ram");
		EXPECT_TRUE(memory->qmp_socket.empty());
	}
}

TEST(TopologyMemory, QmpSocketWithSharedRam)
{
	auto result = Topology::parse(
	    document(R"({"kind": "qemu_shared_ram", "path": "/dev/shm/g", "qmp": "/run/g.qmp"})"), "t", Side::dpu);
	ASSERT_TRUE(result.topology) << result.error;
	EXPECT_EQ(result.topology->find_representor("hpf0")->memory->qmp_socket, "/run/g.qmp");
}

TEST(TopologyMemory, RejectsMalformedSources)
{
	struct Case {
		const char *memory;
		const char *path;
		const char *reason;
	} cases[] = {
	    {R"("raw:/x")", "$.dpu.representors[0].memory", "expected an object"},
	    {R"({"path": "/x"})", "$.dpu.representors[0].memory.kind", "missing required key"},
	    {R"({"kind": "vmware", "path": "/x"})", "$.dpu.representors[0].memory.kind", "unknown memory kind"},
	    {R"({"kind": "raw"})", "$.dpu.representors[0].memory.path", "missing required key"},
	    {R"({"kind": "raw", "path": ""})", "$.dpu.representors[0].memory.path", "empty path"},
	    {R"({"kind": "raw", "path": "/x", "qmp": "/q"})", "$.dpu.representors[0].memory.qmp", "only goes with"},
	    {R"({"kind": "raw", "path": "/x", "size": 1})", "$.dpu.representors[0].memory.size", "unknown key"},
	};
	for (const auto &c : cases) {
		auto result = Topology::parse(document(c.memory), "file.json", Side::dpu);
		EXPECT_FALSE(result.topology) << c.memory;
		EXPECT_NE(result.error.find(std::string("file.json: ") + c.path), std::string::npos) << result.error;
		EXPECT_NE(result.error.find(c.reason), std::string::npos) << result.error;
	}
}

TEST(TopologyMemory, SpecStrings)
{
	std::string error;
	auto source = parse_memory_source_spec("elf_core:/images/guest.core", error);
	ASSERT_TRUE(source) << error;
	EXPECT_EQ(source->kind, MemoryKind::elf_core);
	EXPECT_EQ(source->path, "/images/guest.core");

	source = parse_memory_source_spec("qemu_shared_ram:/dev/shm/a:b,qmp=/run/q.sock", error);
	ASSERT_TRUE(source) << error;
	EXPECT_EQ(source->path, "/dev/shm/a:b");
	EXPECT_EQ(source->qmp_socket, "/run/q.sock");

	// One vocabulary with `softdpu apsh --memory`: short kind names and bare paths (kind auto).
	source = parse_memory_source_spec("qemu:/dev/shm/vm,qmp=/run/q.sock", error);
	ASSERT_TRUE(source) << error;
	EXPECT_EQ(source->kind, MemoryKind::qemu_shared_ram);
	EXPECT_EQ(source->path, "/dev/shm/vm");
	EXPECT_EQ(source->qmp_socket, "/run/q.sock");
	source = parse_memory_source_spec("elf:guest.core", error);
	ASSERT_TRUE(source) << error;
	EXPECT_EQ(source->kind, MemoryKind::elf_core);
	source = parse_memory_source_spec("/images/a:b.raw", error);
	ASSERT_TRUE(source) << error;
	EXPECT_EQ(source->kind, MemoryKind::automatic);
	EXPECT_EQ(source->path, "/images/a:b.raw");
	source = parse_memory_source_spec("guest.raw", error);
	ASSERT_TRUE(source) << error;
	EXPECT_EQ(source->kind, MemoryKind::automatic);
	EXPECT_EQ(source->path, "guest.raw");
	EXPECT_FALSE(parse_memory_source_spec("", error));
	EXPECT_NE(error.find("empty memory source path"), std::string::npos);
	EXPECT_FALSE(parse_memory_source_spec("floppy:/x", error));
	EXPECT_NE(error.find("unknown memory kind"), std::string::npos);
	EXPECT_FALSE(parse_memory_source_spec("raw:", error));
	EXPECT_NE(error.find("empty memory source path"), std::string::npos);
	EXPECT_FALSE(parse_memory_source_spec("raw:/x,qmp=/q", error));
	EXPECT_NE(error.find("only goes with"), std::string::npos);
	EXPECT_FALSE(parse_memory_source_spec("qemu_shared_ram:/x,qmp=", error));
}

// Running QEMU processes: by PID, -name and libvirt domain, each with an optional QMP socket.
TEST(TopologyMemory, ProcessKinds)
{
	std::string error;
	auto source = parse_memory_source_spec("pid:4321", error);
	ASSERT_TRUE(source) << error;
	EXPECT_EQ(source->kind, MemoryKind::qemu_pid);
	EXPECT_EQ(source->path, "4321");
	EXPECT_TRUE(is_process_kind(source->kind));
	source = parse_memory_source_spec("qemu-name:vm 1,qmp=/run/vm1.qmp", error);
	ASSERT_TRUE(source) << error;
	EXPECT_EQ(source->kind, MemoryKind::qemu_name);
	EXPECT_EQ(source->path, "vm 1");
	EXPECT_EQ(source->qmp_socket, "/run/vm1.qmp");
	source = parse_memory_source_spec("qemu_name:vm1", error);
	ASSERT_TRUE(source) << error;
	EXPECT_EQ(source->kind, MemoryKind::qemu_name);
	source = parse_memory_source_spec("libvirt:web01", error);
	ASSERT_TRUE(source) << error;
	EXPECT_EQ(source->kind, MemoryKind::libvirt);
	EXPECT_STREQ(to_string(MemoryKind::libvirt), "libvirt");
	EXPECT_STREQ(to_string(MemoryKind::qemu_pid), "pid");
	EXPECT_FALSE(is_process_kind(MemoryKind::raw));

	EXPECT_FALSE(parse_memory_source_spec("pid:", error));
	EXPECT_NE(error.find("empty pid value"), std::string::npos) << error;
	EXPECT_FALSE(parse_memory_source_spec("pid:12x", error));
	EXPECT_NE(error.find("not a process ID"), std::string::npos) << error;
	EXPECT_FALSE(parse_memory_source_spec("pid:0", error));
	EXPECT_FALSE(parse_memory_source_spec("pid:99999999999999999999999", error));
	EXPECT_FALSE(parse_memory_source_spec("libvirt:a/b", error));
	EXPECT_NE(error.find("'/'"), std::string::npos) << error;
	EXPECT_FALSE(parse_memory_source_spec(std::string("qemu-name:a\nb"), error));
	EXPECT_FALSE(parse_memory_source_spec("qemu-name:" + std::string(256, 'x'), error));

	// The topology takes the same kinds, with the PID, name or domain as "path".
	auto result =
	    Topology::parse(document(R"({"kind": "libvirt", "path": "web01", "qmp": "/run/w.qmp"})"), "t", Side::dpu);
	ASSERT_TRUE(result.topology) << result.error;
	const auto &memory = result.topology->find_representor("hpf0")->memory;
	ASSERT_TRUE(memory.has_value());
	EXPECT_EQ(memory->kind, MemoryKind::libvirt);
	EXPECT_EQ(memory->path, "web01");
	EXPECT_EQ(memory->qmp_socket, "/run/w.qmp");
	result = Topology::parse(document(R"({"kind": "qemu-name", "path": "vm1"})"), "t", Side::dpu);
	ASSERT_TRUE(result.topology) << result.error;
	result = Topology::parse(document(R"({"kind": "pid", "path": "12x"})"), "file.json", Side::dpu);
	EXPECT_FALSE(result.topology);
	EXPECT_NE(result.error.find("file.json: $.dpu.representors[0].memory.path"), std::string::npos) << result.error;
	EXPECT_NE(result.error.find("not a process ID"), std::string::npos) << result.error;
}

TEST(TopologyMemory, EnvironmentOverride)
{
	std::string error;
	{
		ScopedEnv env("SOFTDPU_APSH_MEMORY", nullptr);
		EXPECT_FALSE(memory_source_from_environment(error));
		EXPECT_TRUE(error.empty());
	}
	{
		ScopedEnv env("SOFTDPU_APSH_MEMORY", "lime:/tmp/x.lime");
		auto source = memory_source_from_environment(error);
		ASSERT_TRUE(source) << error;
		EXPECT_EQ(source->kind, MemoryKind::lime);
	}
	{
		ScopedEnv env("SOFTDPU_APSH_MEMORY", "qemu:/dev/shm/vm");
		auto source = memory_source_from_environment(error);
		ASSERT_TRUE(source) << error;
		EXPECT_EQ(source->kind, MemoryKind::qemu_shared_ram);
	}
	{
		ScopedEnv env("SOFTDPU_APSH_MEMORY", "floppy:/x");
		EXPECT_FALSE(memory_source_from_environment(error));
		EXPECT_EQ(error.rfind("SOFTDPU_APSH_MEMORY: ", 0), 0u) << error;
	}
}
