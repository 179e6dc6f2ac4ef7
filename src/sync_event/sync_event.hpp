// struct doca_sync_event: a 64-bit value shared by threads, usable stand-alone (synchronous calls)
// or as a DOCA context whose tasks read, update and wait on the value from a progress engine.
//
// Threading: configuration, start/stop and the tasks belong to one application thread (the PE's,
// in context mode). Once started, get/update/wait may be called from any thread; they only touch
// the value (atomically), the update counter and the PE's wake-up flag.
//
// Event-driven PEs: a wait-gt task that is not satisfied stays in the context's not-ready queue.
// Every update made through this API bumps `updates_` and then signals the PE if it is armed;
// the PE asks not_ready_may_be_ready() before sleeping, which compares `updates_` with the count
// seen at the start of the last progress(). Both sides use sequentially consistent operations
// (as doca_pe does with its armed flag), so either the updater sees the PE armed and signals, or
// the PE sees the new count and does not sleep. Plain stores to storage given with set_addr do
// not go through this path: the PE sees them at its next progress only (docs/sync-event.md).
#pragma once

#include <doca_sync_event.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/exec/ctx.hpp"
#include "core/exec/task_pool.hpp"
#include "core/xproc/blob.hpp"
#include "core/xproc/registry.hpp"

struct doca_sync_event_task_get : public doca_task {
	uint64_t *ret_val_ptr = nullptr;
};

struct doca_sync_event_task_notify_set : public doca_task {
	uint64_t set_val = 0;
};

struct doca_sync_event_task_notify_add : public doca_task {
	uint64_t inc_val = 0;
	uint64_t *fetched_val_ptr = nullptr;
};

struct doca_sync_event_task_wait_gt : public doca_task {
	uint64_t wait_val = 0;
	uint64_t mask = 0;
};

// Never created: softdpu cannot import remote events yet. Declared so the C API has a real type.
struct doca_sync_event_remote_net {};

struct doca_sync_event : public doca_ctx {
public:
	// Task types of this context (doca_task::type).
	static constexpr uint16_t kTaskGet = 1;
	static constexpr uint16_t kTaskNotifySet = 2;
	static constexpr uint16_t kTaskNotifyAdd = 3;
	static constexpr uint16_t kTaskWaitGt = 4;

	doca_sync_event() noexcept = default;
	~doca_sync_event() override;

	// --- across processes (docs/host-dpu.md) ---
	// The host side: moves the value into this process's export registry (shared with importers)
	// and returns the descriptor, owned by the event until it is destroyed.
	doca_error_t export_to_dpu(doca_dev *dev, const uint8_t **data, size_t *size) noexcept;
	// The DPU side: an event whose value is the exporter's; configured already, start it as usual.
	static doca_error_t create_from_export(doca_dev *dev, const uint8_t *data, size_t size,
					       doca_sync_event **event) noexcept;
	bool is_shared() const noexcept { return shared_entry_ != nullptr; }

	// --- configuration (not started) ---
	doca_error_t add_publisher_cpu(doca_dev *dev) noexcept;
	doca_error_t add_publisher_dpu() noexcept;
	doca_error_t add_publisher_remote_net() noexcept;
	doca_error_t add_subscriber_cpu(doca_dev *dev) noexcept;
	doca_error_t add_subscriber_dpu() noexcept;
	doca_error_t set_addr(uint64_t *addr) noexcept;

	// --- stand-alone mode ---
	doca_error_t start_standalone() noexcept;
	doca_error_t stop_standalone() noexcept;
	bool is_standalone_started() const noexcept { return standalone_started_; }
	// The event as a context; null while started stand-alone. Commits the event to context mode.
	doca_ctx *as_ctx() noexcept;
	// Whether the event may be destroyed now (a context must be idle).
	bool can_destroy() const noexcept { return is_idle(); }

	// --- synchronous operations, any thread, started event ---
	doca_error_t get(uint64_t *value) const noexcept;
	doca_error_t update_set(uint64_t value) noexcept;
	doca_error_t update_add(uint64_t value, uint64_t *fetched) noexcept;
	doca_error_t wait_gt(uint64_t value, uint64_t mask, bool yield) const noexcept;
	// Why a shared event can no longer work (peer gone, export revoked); DOCA_SUCCESS if it can.
	doca_error_t shared_state() const noexcept;

	// --- tasks (context mode) ---
	doca_error_t set_get_conf(doca_sync_event_task_get_completion_cb_t on_success,
				  doca_sync_event_task_get_completion_cb_t on_error, uint32_t num_tasks) noexcept;
	doca_error_t set_notify_set_conf(doca_sync_event_task_notify_set_completion_cb_t on_success,
					 doca_sync_event_task_notify_set_completion_cb_t on_error,
					 uint32_t num_tasks) noexcept;
	doca_error_t set_notify_add_conf(doca_sync_event_task_notify_add_completion_cb_t on_success,
					 doca_sync_event_task_notify_add_completion_cb_t on_error,
					 uint32_t num_tasks) noexcept;
	doca_error_t set_wait_gt_conf(doca_sync_event_task_wait_gt_completion_cb_t on_success,
				      doca_sync_event_task_wait_gt_completion_cb_t on_error,
				      uint32_t num_tasks) noexcept;

	doca_error_t alloc_get(uint64_t *ret_val_ptr, union doca_data user_data,
			       doca_sync_event_task_get **task) noexcept;
	doca_error_t alloc_notify_set(uint64_t set_val, union doca_data user_data,
				      doca_sync_event_task_notify_set **task) noexcept;
	doca_error_t alloc_notify_add(uint64_t inc_val, uint64_t *fetched_val_ptr, union doca_data user_data,
				      doca_sync_event_task_notify_add **task) noexcept;
	doca_error_t alloc_wait_gt(uint64_t wait_val, uint64_t mask, union doca_data user_data,
				   doca_sync_event_task_wait_gt **task) noexcept;

	// DOCA's hardware limits for wait-gt tasks, enforced by doca_task_try_submit only.
	static bool is_supported_wait_gt(uint64_t wait_val, uint64_t mask) noexcept;

	// --- Progressable ---
	bool progress() override;

protected:
	doca_error_t on_start() noexcept override;
	void on_stopped() noexcept override;
	doca_error_t validate(const doca_task *task) const noexcept override;
	Execution on_submit(doca_task *task) noexcept override;
	Execution execute(doca_task *task) noexcept override;
	bool not_ready_may_be_ready() const noexcept override;

private:
	// A pool size and the callbacks of one task type, as set by *_set_conf.
	struct TaskConf {
		doca_task_completion_cb_t on_success = nullptr;
		doca_task_completion_cb_t on_error = nullptr;
		uint32_t num_tasks = 0;
	};

	bool is_started() const noexcept { return standalone_started_ || !is_idle(); }
	// BAD_STATE (logged) when the configuration can no longer change.
	doca_error_t check_configurable(const char *what) const noexcept;
	doca_error_t check_task_configurable(const char *what) const noexcept;
	doca_error_t check_locations(const char *what) const noexcept;
	doca_error_t add_device(doca_dev *dev) noexcept;
	doca_error_t set_task_conf(TaskConf &conf, doca_task_completion_cb_t on_success,
				   doca_task_completion_cb_t on_error, uint32_t num_tasks, const char *what) noexcept;
	doca_error_t alloc_from(softdpu::exec::TaskPoolBase &pool, const TaskConf &conf, const char *what,
				doca_task **task) noexcept;
	// Selects the storage and makes the value reachable from other threads.
	void activate() noexcept;
	void deactivate() noexcept;
	// Called after every change made through this API: wakes a PE sleeping on a wait-gt task.
	void value_changed() noexcept;
	Execution run(doca_task *task) noexcept;
	Execution run_locally(doca_task *task, std::atomic_ref<uint64_t> value) noexcept;

	uint64_t *storage() const noexcept { return value_.load(std::memory_order_acquire); }
	// Importers bracket every change of the shared value with the registry's accessor protocol, so
	// an exporter that revoked the event (destroyed it) never sees a late write.
	bool begin_change() noexcept;
	void end_change() noexcept;
	doca_error_t shared_wait(uint64_t value, uint64_t mask, bool yield) const noexcept;
	bool configurable_locally(const char *what) const noexcept;

	// Where the value lives; set by activate() (and by export_to_dpu), read by any thread.
	std::atomic<uint64_t *> value_{nullptr};
	// Exported or imported: the registry entry holding the value and its futex word.
	softdpu::xproc::SharedEntry *shared_entry_ = nullptr;
	uint32_t export_index_ = UINT32_MAX;
	uint64_t export_fork_epoch_ = 0; // of the exporting process (not a forked child of it)
	uint64_t export_generation_ = 0; // of the registry entry
	const doca_dev *export_dev_ = nullptr;
	softdpu::xproc::BlobBytes export_blob_{};
	std::unique_ptr<softdpu::xproc::Import> import_;
	// Wait-gt tasks of a shared event check the peer every kPeerCheckPeriod of progress.
	mutable uint64_t next_peer_check_ns_ = 0;
	alignas(8) uint64_t internal_value_ = 0;
	uint64_t *user_addr_ = nullptr;
	std::atomic<bool> active_{false};
	// Updates made through this API; see the file comment.
	std::atomic<uint64_t> updates_{0};
	uint64_t updates_at_last_progress_ = 0;

	bool standalone_started_ = false;
	bool context_mode_ = false;
	bool publisher_declared_ = false;
	bool subscriber_declared_ = false;
	bool remote_net_publisher_ = false;
	// Devices named as CPU locations, each held as a user while the event exists.
	std::vector<doca_dev *> devices_;

	TaskConf get_conf_;
	TaskConf notify_set_conf_;
	TaskConf notify_add_conf_;
	TaskConf wait_gt_conf_;
	softdpu::exec::TaskPool<doca_sync_event_task_get> get_pool_;
	softdpu::exec::TaskPool<doca_sync_event_task_notify_set> notify_set_pool_;
	softdpu::exec::TaskPool<doca_sync_event_task_notify_add> notify_add_pool_;
	softdpu::exec::TaskPool<doca_sync_event_task_wait_gt> wait_gt_pool_;
};
