// The objects behind App Shield's opaque DOCA types, and who owns what.
//
// doca_apsh_ctx and doca_apsh_system are handles over shared C++ objects (system.hpp): a system
// keeps its context (and the DMA device user reference) alive, and every snapshot (a *_get result)
// keeps its system alive, so destroying a handle never invalidates an array the caller still holds
// (DOCA: "this will not destroy process/module/libs ..."). Snapshots are owned by a registry keyed
// by the array pointer handed out; *_free looks the pointer up, so a foreign or double-freed
// pointer is logged and ignored instead of corrupting memory.
#pragma once

#include "apsh/api/system.hpp"
#include "apsh/introspection.hpp"

#include <doca_apsh.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace softdpu::apsh::api {

// How the API opens a guest; tests replace it (testing.hpp).
using Opener =
    std::function<Status(const SourceSpec &, const KernelHints &, const Limits &, std::unique_ptr<LinuxSystem> &)>;
Opener current_opener();

// Resolves the memory source of a representor: SOFTDPU_APSH_MEMORY, else the topology's.
Status memory_source_of(const doca_dev_rep &rep, SourceSpec &out);

// "rwx" with '-' for missing bits, as procfs prints the first three columns.
std::string protection_string(uint32_t prot);

} // namespace softdpu::apsh::api

struct doca_apsh_ctx {
	std::shared_ptr<softdpu::apsh::api::Context> context = std::make_shared<softdpu::apsh::api::Context>();
};

struct doca_apsh_system {
	explicit doca_apsh_system(std::shared_ptr<softdpu::apsh::api::Context> context)
	    : system(std::make_shared<softdpu::apsh::api::System>(std::move(context)))
	{
	}
	std::shared_ptr<softdpu::apsh::api::System> system;
};

struct doca_apsh_process {
	std::shared_ptr<softdpu::apsh::api::System> system;
	softdpu::apsh::Process p;
};

struct doca_apsh_thread {
	softdpu::apsh::Thread t;
};

struct doca_apsh_lib {
	softdpu::apsh::Library l;
};

struct doca_apsh_vad {
	softdpu::apsh::MemoryArea a;
	std::string protection;
};

struct doca_apsh_module {
	softdpu::apsh::Module m;
};

struct doca_apsh_envar {
	softdpu::apsh::EnvVar e;
};

struct doca_apsh_netscan {
	softdpu::apsh::Connection c;
	std::string protocol;
	std::string state;
	std::string time; // not recorded by Linux: empty
};

struct doca_apsh_process_parameters {
	softdpu::apsh::ProcessParameters p;
};

struct doca_apsh_injection_detect {
	softdpu::apsh::Injection i;
	std::string protection;
	std::string tag; // Windows pool tag: empty on Linux
};

struct doca_apsh_attestation {
	uint32_t pid = 0;
	std::string comm;
	std::string path;
	std::string protection;
	uint64_t start = 0;
	uint64_t end = 0;
	int pages_number = 0;
	int pages_present = 0;
	int matching_hashes = 0;
	bool hash_data_is_present = false;
};

struct doca_apsh_yara {
	uint32_t pid = 0;
	std::string comm;
	std::string rule;
	uint64_t window_addr = 0;
	uint64_t window_len = 0;
};

// softdpu/apsh.h's compiled user rules (scan_api.cpp); watches keep the rules they were given.
struct doca_apsh_user_yara_rules {
	std::shared_ptr<softdpu::apsh::api::YaraRules> rules;
};

struct doca_apsh_container {
	std::shared_ptr<softdpu::apsh::api::System> system;
	softdpu::apsh::Container c;
};

// Windows-only objects: never created for a Linux system.
struct doca_apsh_privilege {};
struct doca_apsh_handle {};
struct doca_apsh_ldrmodule {};
struct doca_apsh_sid {};
