// App Shield's context and system: the C++ classes behind doca_apsh_ctx and doca_apsh_system
// (the C forwarders are in system_api.cpp; the queries over a started system in query_api.cpp and
// scan_api.cpp).
//
// A Context owns the DMA device user reference (doca_apsh_dma_dev_set). A System owns its settings
// (the representor user reference among them) and, once started, the guest reader; it shares its
// context, which stays alive as long as a system of it does. Queries on one system are serialised
// by the system's mutex.
#pragma once

#include "apsh/api/exec_hash.hpp"
#include "apsh/api/yara_scan.hpp"
#include "apsh/introspection.hpp"

#include <doca_apsh.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace softdpu::apsh::api {

class Context {
public:
	Context() = default;
	~Context();
	Context(const Context &) = delete;
	Context &operator=(const Context &) = delete;

	// doca_apsh_dma_dev_set / doca_apsh_start (arguments checked by the caller).
	doca_error_t set_dma_dev(doca_dev *dma_dev) noexcept;
	doca_error_t start() noexcept;
	// Whether a system bound to rep may start in this context (logged as function when not).
	doca_error_t admits(const doca_dev_rep *rep, const char *function) noexcept;

private:
	std::mutex mutex_;
	doca_dev *dma_dev_ = nullptr; // held as a device user while set
	bool started_ = false;
};

// DOCA-visible settings of a system (doca_apsh_sys_config and the setters).
struct SystemSettings {
	bool os_type_set = false;
	std::string symbol_map_path;
	bool symbol_map_set = false;
	std::string mem_region_path;
	bool mem_region_set = false;
	std::string kpgd_path;
	KernelHints hints;            // from the symbol map and kpgd files
	std::vector<RamRange> ranges; // from the memory-region file
	doca_dev_rep *rep = nullptr;  // held as a representor user while set
	WindowSettings window;
	Limits limits;
	uint32_t hashtest_limit = 65536; // memory areas attested per process
	uint32_t ldrmodules_limit = 4096;
	uint32_t windows_envars_limit = 4096;
	uint32_t handles_limit = 65536;
};

class System {
public:
	explicit System(std::shared_ptr<Context> ctx) noexcept : ctx_(std::move(ctx)) {}
	~System();
	System(const System &) = delete;
	System &operator=(const System &) = delete;

	// ---- Configuration and start (each takes the system's lock). function names the DOCA call in
	// messages. They may throw std::bad_alloc (the C forwarders catch it). ----
	doca_error_t set_symbol_map(const char *path, const char *function);
	doca_error_t set_mem_region(const char *path, const char *function);
	doca_error_t set_kpgd_file(const char *path, const char *function);
	doca_error_t set_dev(doca_dev_rep *dev, const char *function);
	doca_error_t set_os_type(long os_type, const char *function);
	doca_error_t set_window_size(uint32_t size, const char *function);
	doca_error_t set_window_step(uint32_t step, const char *function);
	// __doca_apsh_sys_config; attr is the integer the caller passed (it may be outside the enum).
	doca_error_t configure(long attr, void *value);
	// doca_apsh_system_start: opens the guest behind the representor's memory source.
	doca_error_t start();

	// ---- For the queries: the caller holds mutex() around guest() and settings() ----
	std::mutex &mutex() noexcept { return mutex_; }
	// Set once by start and never cleared. The queries check it before taking the lock: DOCA requires
	// start to have returned before any query.
	bool started() const noexcept { return guest_ != nullptr; }
	LinuxSystem &guest() const noexcept { return *guest_; }
	const SystemSettings &settings() const noexcept { return settings_; }
	// The attestation hash maps of this system's queries (thread-safe; no lock needed).
	ExecHashMapCache &exec_hash_maps() noexcept { return exec_hash_maps_; }
	// Page hashes by guest-physical frame, for attestation (the caller holds mutex()).
	PageDigestCache &page_digests() noexcept { return page_digests_; }

private:
	// The setters' bodies; the caller holds mutex_.
	doca_error_t refuse_if_started(const char *function) const noexcept;
	doca_error_t symbol_map_locked(const char *path, const char *function);
	doca_error_t mem_region_locked(const char *path, const char *function);
	doca_error_t kpgd_file_locked(const char *path, const char *function);
	doca_error_t dev_locked(doca_dev_rep *dev, const char *function) noexcept;
	doca_error_t os_type_locked(long os_type, const char *function) noexcept;
	doca_error_t window_size_locked(uint32_t size, const char *function) noexcept;
	doca_error_t window_step_locked(uint32_t step, const char *function) noexcept;

	std::shared_ptr<Context> ctx_;
	std::mutex mutex_; // serialises configuration and queries on this system
	SystemSettings settings_;
	std::unique_ptr<LinuxSystem> guest_; // set by start
	ExecHashMapCache exec_hash_maps_;
	PageDigestCache page_digests_;
};

} // namespace softdpu::apsh::api
