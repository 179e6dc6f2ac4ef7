#include "sync_event/sync_event.hpp"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <new>

#include "common/cpu.hpp"
#include "common/sdk_log.hpp"
#include "core/dev/dev.hpp"
#include "core/exec/pe.hpp"
#include "core/xproc/registry.hpp"

namespace {

using softdpu::common::cpu_relax;

// The value is a plain uint64_t (it may be the application's own word, set_addr); every access
// from softdpu is atomic through this view.
inline std::atomic_ref<uint64_t> atomic_view(uint64_t *value) noexcept
{
	return std::atomic_ref<uint64_t>(*value);
}

// Spins before a waiter on a shared event sleeps in the kernel, and how long each sleep lasts before
// the waiter checks that its peer is still there.
constexpr int kSharedSpins = 4096;
constexpr long kPeerCheckPeriodNs = 10'000'000; // 10 ms

uint64_t now_ns() noexcept
{
	return static_cast<uint64_t>(
	    std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
		.count());
}

} // namespace

doca_sync_event::~doca_sync_event()
{
	deactivate();
	if (export_index_ != UINT32_MAX && export_fork_epoch_ == softdpu::xproc::fork_epoch()) {
		doca_error_t error = DOCA_SUCCESS;
		if (softdpu::xproc::Registry *registry = softdpu::xproc::Registry::instance(&error)) {
			// The value lives in the entry itself: an importer stalled inside an access can only
			// land there, so the entry is retired instead of reused.
			if (registry->revoke(export_index_, softdpu::xproc::kRevokeWait))
				registry->release(export_index_);
			else
				registry->quarantine(export_index_);
		}
	}
	import_.reset();
	for (doca_dev *dev : devices_)
		dev->remove_user();
}

doca_error_t doca_sync_event::check_configurable(const char *what) const noexcept
{
	if (import_) {
		// DOCA: "The Sync Event can only be configured and exported by the exporting process."
		SDK_LOG_ERR("failed to %s: the sync event was created from an export", what);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (is_started()) {
		SDK_LOG_ERR("failed to %s: sync event is started", what);
		return DOCA_ERROR_BAD_STATE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event::check_task_configurable(const char *what) const noexcept
{
	// DOCA documents NOT_PERMITTED ("context not in idle state") for the task configuration calls.
	if (is_started()) {
		SDK_LOG_ERR("failed to configure %s tasks: sync event is %s", what,
			    standalone_started_ ? "started stand-alone" : "a context that is not idle");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event::check_locations(const char *what) const noexcept
{
	if (!publisher_declared_ || !subscriber_declared_) {
		SDK_LOG_ERR("failed to %s: no %s location declared (doca_sync_event_add_%s_location_*)", what,
			    publisher_declared_ ? "subscriber" : "publisher",
			    publisher_declared_ ? "subscriber" : "publisher");
		return DOCA_ERROR_BAD_STATE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event::add_device(doca_dev *dev) noexcept
{
	if (std::find(devices_.begin(), devices_.end(), dev) != devices_.end())
		return DOCA_SUCCESS;
	try {
		devices_.push_back(dev);
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
	dev->add_user();
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event::add_publisher_cpu(doca_dev *dev) noexcept
{
	doca_error_t result = check_configurable("add a CPU publisher");
	if (result == DOCA_SUCCESS)
		result = add_device(dev);
	if (result == DOCA_SUCCESS)
		publisher_declared_ = true;
	return result;
}

doca_error_t doca_sync_event::add_publisher_dpu() noexcept
{
	const doca_error_t result = check_configurable("add a DPU publisher");
	if (result == DOCA_SUCCESS)
		publisher_declared_ = true;
	return result;
}

doca_error_t doca_sync_event::add_publisher_remote_net() noexcept
{
	const doca_error_t result = check_configurable("add a remote-net publisher");
	if (result != DOCA_SUCCESS)
		return result;
	if (user_addr_ != nullptr) {
		// DOCA allows an external address only for CPU/DPU configured events.
		SDK_LOG_ERR("failed to add a remote-net publisher: the event uses storage given with set_addr");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	publisher_declared_ = true;
	remote_net_publisher_ = true;
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event::add_subscriber_cpu(doca_dev *dev) noexcept
{
	doca_error_t result = check_configurable("add a CPU subscriber");
	if (result == DOCA_SUCCESS)
		result = add_device(dev);
	if (result == DOCA_SUCCESS)
		subscriber_declared_ = true;
	return result;
}

doca_error_t doca_sync_event::add_subscriber_dpu() noexcept
{
	const doca_error_t result = check_configurable("add a DPU subscriber");
	if (result == DOCA_SUCCESS)
		subscriber_declared_ = true;
	return result;
}

doca_error_t doca_sync_event::set_addr(uint64_t *addr) noexcept
{
	const doca_error_t result = check_configurable("set the value address");
	if (result != DOCA_SUCCESS)
		return result;
	if (reinterpret_cast<uintptr_t>(addr) % std::atomic_ref<uint64_t>::required_alignment != 0) {
		SDK_LOG_ERR("failed to set the value address: %p is not 8-byte aligned", static_cast<void *>(addr));
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (remote_net_publisher_) {
		SDK_LOG_ERR("failed to set the value address: a remote-net publisher needs internal storage");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (shared_entry_ != nullptr) {
		SDK_LOG_ERR("failed to set the value address: the event is exported (its value is shared)");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	user_addr_ = addr;
	return DOCA_SUCCESS;
}

void doca_sync_event::activate() noexcept
{
	uint64_t *where = user_addr_ != nullptr ? user_addr_ : &internal_value_;
	if (shared_entry_ != nullptr)
		where = &shared_entry_->value;
	value_.store(where, std::memory_order_release);
	active_.store(true, std::memory_order_release);
}

void doca_sync_event::deactivate() noexcept
{
	active_.store(false, std::memory_order_release);
}

doca_error_t doca_sync_event::start_standalone() noexcept
{
	if (context_mode_) {
		SDK_LOG_ERR("failed to start sync event: it operates as a context (use doca_ctx_start)");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (standalone_started_) {
		SDK_LOG_ERR("failed to start sync event: already started");
		return DOCA_ERROR_BAD_STATE;
	}
	const doca_error_t result = check_locations("start sync event");
	if (result != DOCA_SUCCESS)
		return result;
	standalone_started_ = true;
	activate();
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event::stop_standalone() noexcept
{
	if (!standalone_started_) {
		SDK_LOG_ERR("failed to stop sync event: it was not started with doca_sync_event_start");
		return DOCA_ERROR_BAD_STATE;
	}
	deactivate();
	standalone_started_ = false;
	return DOCA_SUCCESS;
}

doca_ctx *doca_sync_event::as_ctx() noexcept
{
	if (standalone_started_) {
		SDK_LOG_ERR("sync event started with doca_sync_event_start cannot operate as a context");
		return nullptr;
	}
	context_mode_ = true;
	return this;
}

doca_error_t doca_sync_event::get(uint64_t *value) const noexcept
{
	if (doca_unlikely(!active_.load(std::memory_order_acquire))) {
		SDK_LOG_ERR("failed to get sync event value: event is not started");
		return DOCA_ERROR_BAD_STATE;
	}
	if (import_ != nullptr && !import_->export_active()) [[unlikely]] {
		SDK_LOG_ERR("failed to get sync event value: the exporter destroyed the event");
		return DOCA_ERROR_NOT_CONNECTED;
	}
	*value = atomic_view(storage()).load(std::memory_order_acquire);
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event::update_set(uint64_t value) noexcept
{
	if (doca_unlikely(!active_.load(std::memory_order_acquire))) {
		SDK_LOG_ERR("failed to set sync event value: event is not started");
		return DOCA_ERROR_BAD_STATE;
	}
	if (!begin_change())
		return DOCA_ERROR_NOT_CONNECTED;
	atomic_view(storage()).store(value, std::memory_order_seq_cst);
	value_changed();
	end_change();
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event::update_add(uint64_t value, uint64_t *fetched) noexcept
{
	if (doca_unlikely(!active_.load(std::memory_order_acquire))) {
		SDK_LOG_ERR("failed to add to sync event value: event is not started");
		return DOCA_ERROR_BAD_STATE;
	}
	if (!begin_change())
		return DOCA_ERROR_NOT_CONNECTED;
	*fetched = atomic_view(storage()).fetch_add(value, std::memory_order_seq_cst);
	value_changed();
	end_change();
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event::wait_gt(uint64_t value, uint64_t mask, bool yield) const noexcept
{
	if (doca_unlikely(!active_.load(std::memory_order_acquire))) {
		SDK_LOG_ERR("failed to wait on sync event: event is not started");
		return DOCA_ERROR_BAD_STATE;
	}
	if (shared_entry_ != nullptr)
		return shared_wait(value, mask, yield);
	const std::atomic_ref<uint64_t> current = atomic_view(storage());
	while ((current.load(std::memory_order_acquire) & mask) <= value) {
		if (yield)
			sched_yield();
		else
			cpu_relax();
	}
	return DOCA_SUCCESS;
}

bool doca_sync_event::begin_change() noexcept
{
	if (import_ == nullptr) [[likely]]
		return true;
	if (!import_->begin_access()) {
		SDK_LOG_ERR("sync event update failed: the exporter destroyed the event");
		return false;
	}
	return true;
}

void doca_sync_event::end_change() noexcept
{
	if (import_ != nullptr)
		import_->end_access();
}

doca_error_t doca_sync_event::shared_state() const noexcept
{
	if (import_ != nullptr) {
		if (!import_->export_active()) {
			SDK_LOG_ERR("sync event: the exporter destroyed the event");
			return DOCA_ERROR_NOT_CONNECTED;
		}
		if (!import_->exporter_alive()) {
			SDK_LOG_ERR("sync event: the exporting process has exited");
			return DOCA_ERROR_NOT_CONNECTED;
		}
		return DOCA_SUCCESS;
	}
	// The exporter: lost when importers came and every one of them died (importers of the entry's
	// earlier lives do not count).
	if (softdpu::xproc::importers_of(*shared_entry_, export_generation_) == softdpu::xproc::Importers::all_dead) {
		SDK_LOG_ERR("sync event: every process that imported the event has exited");
		return DOCA_ERROR_NOT_CONNECTED;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event::shared_wait(uint64_t value, uint64_t mask, bool yield) const noexcept
{
	const std::atomic_ref<uint64_t> current = atomic_view(storage());
	for (int i = 0; i < kSharedSpins; ++i) {
		if ((current.load(std::memory_order_acquire) & mask) > value)
			return DOCA_SUCCESS;
		if (yield)
			sched_yield();
		else
			cpu_relax();
	}
	softdpu::xproc::SharedEntry &e = *shared_entry_;
	doca_error_t state = shared_state();
	while (state == DOCA_SUCCESS) {
		const uint32_t seen = e.futex_word.load(std::memory_order_seq_cst);
		e.waiters.fetch_add(1, std::memory_order_seq_cst);
		long woke = 0;
		if ((current.load(std::memory_order_seq_cst) & mask) <= value) {
			struct timespec timeout = {0, kPeerCheckPeriodNs};
			woke = syscall(SYS_futex, &e.futex_word, FUTEX_WAIT, seen, &timeout, nullptr, 0);
		}
		e.waiters.fetch_sub(1, std::memory_order_seq_cst);
		if ((current.load(std::memory_order_acquire) & mask) > value)
			return DOCA_SUCCESS;
		// A timed-out wait, or an export that went away, may mean the peer is gone: look again.
		if ((woke != 0 && errno == ETIMEDOUT) || (import_ != nullptr && !import_->export_active()))
			state = shared_state();
	}
	return state;
}

void doca_sync_event::value_changed() noexcept
{
	if (shared_entry_ != nullptr) {
		shared_entry_->futex_word.fetch_add(1, std::memory_order_seq_cst);
		if (shared_entry_->waiters.load(std::memory_order_seq_cst) != 0)
			syscall(SYS_futex, &shared_entry_->futex_word, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
	}
	updates_.fetch_add(1, std::memory_order_seq_cst);
	// pe() is set when the context is connected, before it starts, and never changes while the
	// event is started (active_ orders it before this read).
	if (doca_pe *engine = pe(); engine != nullptr)
		engine->signal_if_armed();
}

bool doca_sync_event::progress()
{
	// Read before any task looks at the value: a change after this read makes the next
	// not_ready_may_be_ready() true (see the file comment in sync_event.hpp).
	updates_at_last_progress_ = updates_.load(std::memory_order_seq_cst);
	return doca_ctx::progress();
}

bool doca_sync_event::not_ready_may_be_ready() const noexcept
{
	// Updates from the other process cannot signal this process's PE: poll.
	if (shared_entry_ != nullptr)
		return true;
	return updates_.load(std::memory_order_seq_cst) != updates_at_last_progress_;
}

doca_error_t doca_sync_event::set_task_conf(TaskConf &conf, doca_task_completion_cb_t on_success,
					    doca_task_completion_cb_t on_error, uint32_t num_tasks,
					    const char *what) noexcept
{
	const doca_error_t result = check_task_configurable(what);
	if (result != DOCA_SUCCESS)
		return result;
	if (num_tasks == 0) {
		SDK_LOG_ERR("failed to configure %s tasks: the number of tasks must be at least 1", what);
		return DOCA_ERROR_INVALID_VALUE;
	}
	conf.on_success = on_success;
	conf.on_error = on_error;
	conf.num_tasks = num_tasks;
	return DOCA_SUCCESS;
}

// The callbacks have task-specific signatures; the generic task carries them as
// doca_task_completion_cb_t and each is only ever called with a task of its own type.
doca_error_t doca_sync_event::set_get_conf(doca_sync_event_task_get_completion_cb_t on_success,
					   doca_sync_event_task_get_completion_cb_t on_error,
					   uint32_t num_tasks) noexcept
{
	return set_task_conf(get_conf_, reinterpret_cast<doca_task_completion_cb_t>(on_success),
			     reinterpret_cast<doca_task_completion_cb_t>(on_error), num_tasks, "get");
}

doca_error_t doca_sync_event::set_notify_set_conf(doca_sync_event_task_notify_set_completion_cb_t on_success,
						  doca_sync_event_task_notify_set_completion_cb_t on_error,
						  uint32_t num_tasks) noexcept
{
	return set_task_conf(notify_set_conf_, reinterpret_cast<doca_task_completion_cb_t>(on_success),
			     reinterpret_cast<doca_task_completion_cb_t>(on_error), num_tasks, "notify-set");
}

doca_error_t doca_sync_event::set_notify_add_conf(doca_sync_event_task_notify_add_completion_cb_t on_success,
						  doca_sync_event_task_notify_add_completion_cb_t on_error,
						  uint32_t num_tasks) noexcept
{
	return set_task_conf(notify_add_conf_, reinterpret_cast<doca_task_completion_cb_t>(on_success),
			     reinterpret_cast<doca_task_completion_cb_t>(on_error), num_tasks, "notify-add");
}

doca_error_t doca_sync_event::set_wait_gt_conf(doca_sync_event_task_wait_gt_completion_cb_t on_success,
					       doca_sync_event_task_wait_gt_completion_cb_t on_error,
					       uint32_t num_tasks) noexcept
{
	return set_task_conf(wait_gt_conf_, reinterpret_cast<doca_task_completion_cb_t>(on_success),
			     reinterpret_cast<doca_task_completion_cb_t>(on_error), num_tasks, "wait-gt");
}

doca_error_t doca_sync_event::on_start() noexcept
{
	doca_error_t result = check_locations("start sync event context");
	if (result != DOCA_SUCCESS)
		return result;
	// Every pool is sized now so that allocating, submitting and completing tasks never allocates.
	if (get_conf_.num_tasks != 0)
		result =
		    get_pool_.allocate(get_conf_.num_tasks, this, kTaskGet, get_conf_.on_success, get_conf_.on_error);
	if (result == DOCA_SUCCESS && notify_set_conf_.num_tasks != 0)
		result = notify_set_pool_.allocate(notify_set_conf_.num_tasks, this, kTaskNotifySet,
						   notify_set_conf_.on_success, notify_set_conf_.on_error);
	if (result == DOCA_SUCCESS && notify_add_conf_.num_tasks != 0)
		result = notify_add_pool_.allocate(notify_add_conf_.num_tasks, this, kTaskNotifyAdd,
						   notify_add_conf_.on_success, notify_add_conf_.on_error);
	if (result == DOCA_SUCCESS && wait_gt_conf_.num_tasks != 0)
		result = wait_gt_pool_.allocate(wait_gt_conf_.num_tasks, this, kTaskWaitGt, wait_gt_conf_.on_success,
						wait_gt_conf_.on_error);
	if (result != DOCA_SUCCESS) {
		on_stopped();
		SDK_LOG_ERR("failed to start sync event context: cannot allocate its task pools");
		return DOCA_ERROR_NO_MEMORY;
	}
	activate();
	return DOCA_SUCCESS;
}

void doca_sync_event::on_stopped() noexcept
{
	deactivate();
	get_pool_.deallocate();
	notify_set_pool_.deallocate();
	notify_add_pool_.deallocate();
	wait_gt_pool_.deallocate();
}

doca_error_t doca_sync_event::alloc_from(softdpu::exec::TaskPoolBase &pool, const TaskConf &conf, const char *what,
					 doca_task **task) noexcept
{
	if (is_running() && conf.num_tasks == 0) {
		SDK_LOG_ERR(
		    "failed to allocate %s task: the task type is not configured (doca_sync_event_task_%s_set_conf)",
		    what, what);
		return DOCA_ERROR_NO_MEMORY;
	}
	const doca_error_t result = alloc_task(pool, task);
	if (result == DOCA_ERROR_NO_MEMORY)
		SDK_LOG_DBG("sync event %s task pool exhausted (%u tasks)", what, conf.num_tasks);
	return result;
}

doca_error_t doca_sync_event::alloc_get(uint64_t *ret_val_ptr, union doca_data user_data,
					doca_sync_event_task_get **task) noexcept
{
	doca_task *allocated = nullptr;
	const doca_error_t result = alloc_from(get_pool_, get_conf_, "get", &allocated);
	if (result != DOCA_SUCCESS)
		return result;
	auto *get_task = static_cast<doca_sync_event_task_get *>(allocated);
	get_task->ret_val_ptr = ret_val_ptr;
	get_task->user_data = user_data;
	*task = get_task;
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event::alloc_notify_set(uint64_t set_val, union doca_data user_data,
					       doca_sync_event_task_notify_set **task) noexcept
{
	doca_task *allocated = nullptr;
	const doca_error_t result = alloc_from(notify_set_pool_, notify_set_conf_, "notify_set", &allocated);
	if (result != DOCA_SUCCESS)
		return result;
	auto *set_task = static_cast<doca_sync_event_task_notify_set *>(allocated);
	set_task->set_val = set_val;
	set_task->user_data = user_data;
	*task = set_task;
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event::alloc_notify_add(uint64_t inc_val, uint64_t *fetched_val_ptr, union doca_data user_data,
					       doca_sync_event_task_notify_add **task) noexcept
{
	doca_task *allocated = nullptr;
	const doca_error_t result = alloc_from(notify_add_pool_, notify_add_conf_, "notify_add", &allocated);
	if (result != DOCA_SUCCESS)
		return result;
	auto *add_task = static_cast<doca_sync_event_task_notify_add *>(allocated);
	add_task->inc_val = inc_val;
	add_task->fetched_val_ptr = fetched_val_ptr;
	add_task->user_data = user_data;
	*task = add_task;
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event::alloc_wait_gt(uint64_t wait_val, uint64_t mask, union doca_data user_data,
					    doca_sync_event_task_wait_gt **task) noexcept
{
	doca_task *allocated = nullptr;
	const doca_error_t result = alloc_from(wait_gt_pool_, wait_gt_conf_, "wait_gt", &allocated);
	if (result != DOCA_SUCCESS)
		return result;
	auto *wait_task = static_cast<doca_sync_event_task_wait_gt *>(allocated);
	wait_task->wait_val = wait_val;
	wait_task->mask = mask;
	wait_task->user_data = user_data;
	*task = wait_task;
	return DOCA_SUCCESS;
}

bool doca_sync_event::is_supported_wait_gt(uint64_t wait_val, uint64_t mask) noexcept
{
	if (wait_val > 254)
		return false;
	if (mask == 0)
		return true;
	// One run of 1, 2, 4 or 8 whole 0xFF bytes.
	const int shift = std::countr_zero(mask);
	if (shift % 8 != 0)
		return false;
	const uint64_t run = mask >> shift;
	return run == 0xFFu || run == 0xFFFFu || run == 0xFFFFFFFFu || run == ~uint64_t{0};
}

doca_error_t doca_sync_event::validate(const doca_task *task) const noexcept
{
	switch (task->type) {
	case kTaskGet:
		if (static_cast<const doca_sync_event_task_get *>(task)->ret_val_ptr == nullptr) {
			SDK_LOG_ERR("get task %p has no return value pointer", static_cast<const void *>(task));
			return DOCA_ERROR_INVALID_VALUE;
		}
		return DOCA_SUCCESS;
	case kTaskNotifySet:
	case kTaskNotifyAdd:
		return DOCA_SUCCESS;
	case kTaskWaitGt: {
		const auto *wait_task = static_cast<const doca_sync_event_task_wait_gt *>(task);
		if (!is_supported_wait_gt(wait_task->wait_val, wait_task->mask)) {
			SDK_LOG_ERR("wait-gt task %p: wait value %llu / mask 0x%llx outside DOCA's limits ([0, 254]; "
				    "0, 1, 2, 4 or 8 consecutive 0xFF bytes)",
				    static_cast<const void *>(task), (unsigned long long)wait_task->wait_val,
				    (unsigned long long)wait_task->mask);
			return DOCA_ERROR_INVALID_VALUE;
		}
		return DOCA_SUCCESS;
	}
	default:
		return DOCA_ERROR_INVALID_VALUE;
	}
}

doca_sync_event::Execution doca_sync_event::run(doca_task *task) noexcept
{
	const std::atomic_ref<uint64_t> value = atomic_view(storage());
	if (import_ != nullptr && task->type != kTaskWaitGt && task->type != kTaskGet) {
		// Notify tasks change the exporter's value: same protocol as update_set/add.
		if (!begin_change()) {
			task->status = DOCA_ERROR_NOT_CONNECTED;
			return Execution::done;
		}
		const Execution done = run_locally(task, value);
		end_change();
		return done;
	}
	if (shared_entry_ != nullptr && task->type == kTaskWaitGt) {
		const auto *wait_task = static_cast<const doca_sync_event_task_wait_gt *>(task);
		if ((value.load(std::memory_order_acquire) & wait_task->mask) > wait_task->wait_val)
			return Execution::done;
		const uint64_t now = now_ns();
		if (now >= next_peer_check_ns_) {
			next_peer_check_ns_ = now + kPeerCheckPeriodNs;
			const doca_error_t state = shared_state();
			if (state != DOCA_SUCCESS) {
				task->status = state;
				return Execution::done;
			}
		}
		return Execution::not_ready;
	}
	return run_locally(task, value);
}

doca_sync_event::Execution doca_sync_event::run_locally(doca_task *task, std::atomic_ref<uint64_t> value) noexcept
{
	switch (task->type) {
	case kTaskGet: {
		auto *get_task = static_cast<doca_sync_event_task_get *>(task);
		// A task without a destination fails the way hardware fails it: through the error callback.
		if (get_task->ret_val_ptr == nullptr)
			task->status = DOCA_ERROR_INVALID_VALUE;
		else
			*get_task->ret_val_ptr = value.load(std::memory_order_acquire);
		return Execution::done;
	}
	case kTaskNotifySet:
		value.store(static_cast<doca_sync_event_task_notify_set *>(task)->set_val, std::memory_order_seq_cst);
		value_changed();
		return Execution::done;
	case kTaskNotifyAdd: {
		auto *add_task = static_cast<doca_sync_event_task_notify_add *>(task);
		const uint64_t previous = value.fetch_add(add_task->inc_val, std::memory_order_seq_cst);
		if (add_task->fetched_val_ptr != nullptr)
			*add_task->fetched_val_ptr = previous;
		value_changed();
		return Execution::done;
	}
	case kTaskWaitGt: {
		const auto *wait_task = static_cast<const doca_sync_event_task_wait_gt *>(task);
		if ((value.load(std::memory_order_acquire) & wait_task->mask) > wait_task->wait_val)
			return Execution::done;
		return Execution::not_ready;
	}
	default:
		task->status = DOCA_ERROR_INVALID_VALUE;
		return Execution::done;
	}
}

doca_sync_event::Execution doca_sync_event::on_submit(doca_task *task) noexcept
{
	return run(task);
}

doca_sync_event::Execution doca_sync_event::execute(doca_task *task) noexcept
{
	// Only wait-gt tasks are ever left not ready; run() re-checks their condition.
	return run(task);
}

// ---- across processes ----

doca_error_t doca_sync_event::export_to_dpu(doca_dev *dev, const uint8_t **data, size_t *size) noexcept
{
	if (import_ != nullptr) {
		SDK_LOG_ERR("failed to export sync event: it was created from an export (only the exporter exports)");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (!dev->caps().sync_event_export_to_dpu) {
		SDK_LOG_ERR("failed to export sync event: device %s cannot export to the DPU (a host function can)",
			    dev->function().name.c_str());
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (export_index_ != UINT32_MAX) {
		if (dev != export_dev_) {
			SDK_LOG_ERR("failed to export sync event: already exported through device %s",
				    export_dev_->function().name.c_str());
			return DOCA_ERROR_NOT_SUPPORTED;
		}
		*data = export_blob_.data();
		*size = export_blob_.size();
		return DOCA_SUCCESS;
	}
	doca_error_t result = check_locations("export sync event");
	if (result != DOCA_SUCCESS)
		return result;
	if (user_addr_ != nullptr || remote_net_publisher_) {
		SDK_LOG_ERR("failed to export sync event: only events with internal storage and CPU/DPU locations "
			    "can be exported to the DPU");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	// The registry reports its system-call failures as DRIVER, which doca_mmap_export_* document;
	// doca_sync_event_export_to_dpu documents NO_MEMORY ("failed to alloc data stream") instead.
	const auto as_documented = [](doca_error_t error) {
		return error == DOCA_ERROR_DRIVER ? DOCA_ERROR_NO_MEMORY : error;
	};
	softdpu::xproc::Registry *registry = softdpu::xproc::Registry::instance(&result);
	if (registry == nullptr)
		return as_documented(result);
	softdpu::xproc::ExportBlob blob;
	softdpu::xproc::set_exporting_device(blob, dev->function());
	uint32_t index = 0;
	result = registry->publish(softdpu::xproc::ExportKind::sync_event, 0, sizeof(uint64_t), 0, &blob, &index);
	if (result != DOCA_SUCCESS)
		return as_documented(result);
	softdpu::xproc::SharedEntry &entry = registry->shared(index);
	// The value moves into the shared entry. Updates from other threads must not race with the
	// export itself (the application exports once, while setting the event up).
	uint64_t *old = storage();
	const uint64_t current = atomic_view(old != nullptr ? old : &internal_value_).load(std::memory_order_acquire);
	atomic_view(&entry.value).store(current, std::memory_order_seq_cst);
	shared_entry_ = &entry;
	if (active_.load(std::memory_order_acquire))
		value_.store(&entry.value, std::memory_order_release);
	export_index_ = index;
	export_fork_epoch_ = softdpu::xproc::fork_epoch();
	export_generation_ = blob.generation;
	export_dev_ = dev;
	softdpu::xproc::encode(blob, export_blob_);
	*data = export_blob_.data();
	*size = export_blob_.size();
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event::create_from_export(doca_dev *dev, const uint8_t *data, size_t size,
						 doca_sync_event **event) noexcept
{
	if (!dev->caps().sync_event_create_from_export) {
		SDK_LOG_ERR("failed to create sync event from export: device %s cannot import sync events",
			    dev->function().name.c_str());
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	softdpu::xproc::ExportBlob blob;
	const char *why = nullptr;
	if (softdpu::xproc::decode(data, size, &blob, &why) != DOCA_SUCCESS) {
		SDK_LOG_ERR("failed to create sync event from export: %s", why);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (blob.kind != softdpu::xproc::ExportKind::sync_event) {
		SDK_LOG_ERR("failed to create sync event from export: the descriptor is an mmap export");
		return DOCA_ERROR_INVALID_VALUE;
	}
	// Matching (Core guide): an event exported through host pf0 or its VFs is imported through p0
	// (or an SF of p0), pf1's through p1.
	const auto &topology = dev->devinfo().table().topology();
	const softdpu::device::Function *exporter = topology.find_function(blob.dev_name.data());
	const softdpu::device::Function &local = dev->function();
	if (exporter == nullptr || !topology.reaches_over_pci(local, *exporter)) {
		SDK_LOG_ERR("failed to create sync event from export: exported through %s, which device %s does not "
			    "reach",
			    blob.dev_name.data(), local.name.c_str());
		return DOCA_ERROR_NOT_PERMITTED;
	}
	std::unique_ptr<softdpu::xproc::Import> import;
	doca_error_t result = softdpu::xproc::Import::open(blob, &import);
	if (result != DOCA_SUCCESS)
		return result;
	auto *created = new (std::nothrow) doca_sync_event();
	if (created == nullptr)
		return DOCA_ERROR_NO_MEMORY;
	result = created->add_device(dev);
	if (result != DOCA_SUCCESS) {
		delete created;
		return result;
	}
	created->publisher_declared_ = true;
	created->subscriber_declared_ = true;
	created->shared_entry_ = &import->shared();
	created->import_ = std::move(import);
	*event = created;
	return DOCA_SUCCESS;
}
