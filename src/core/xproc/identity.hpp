// Who a process is, in a way that survives pid reuse: pid + start time (field 22 of
// /proc/<pid>/stat, in clock ticks since boot) + the host's boot id. Used by the cross-process
// export registry (docs/host-dpu.md).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace softdpu::xproc {

using BootId = std::array<uint8_t, 16>;

struct ProcessIdentity {
	uint32_t pid = 0;
	uint64_t start_time = 0;
	uint32_t uid = 0;
	BootId boot_id{};
};

// This process (recomputed after fork: the pid is checked on every call).
const ProcessIdentity &self_identity() noexcept;

// Start time of a process from /proc/<pid>/stat; 0 when it does not exist (or cannot be read).
uint64_t process_start_time(uint32_t pid) noexcept;

// Whether pid is still the process that started at start_time. gone: no such process, another
// process has the pid, or it exited (a zombie whose threads all ended). unknown: /proc could not
// tell (no descriptor left, /proc not readable); callers that wait for a process or free what it
// holds must treat unknown as alive.
enum class Liveness { alive, gone, unknown };
Liveness process_liveness(uint32_t pid, uint64_t start_time) noexcept;

// True when the process pid exists and started at start_time (so it is the same process).
bool process_is(uint32_t pid, uint64_t start_time) noexcept;

// Changes in a child after every fork (a pthread_atfork handler): a load, to tell cheaply on a data
// path whether an object was made in this process or inherited from a parent.
uint64_t fork_epoch() noexcept;

// 16 random bytes from the kernel; false if none could be had.
bool random_bytes(void *out, size_t len) noexcept;

} // namespace softdpu::xproc
