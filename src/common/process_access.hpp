// Same-user access between processes (cross-memory attach, /proc/<pid>/fd) and whether a process
// has exited, for the modules that reach into peer processes (core/xproc, device/rdma/transport).
#pragma once

#include <cstdint>

namespace softdpu::common {

// Yama's ptrace_scope 1 allows process_vm_* and /proc/<pid>/fd only to declared tracers: declares
// every process a tracer of this one (PR_SET_PTRACER_ANY) there; nothing elsewhere.
void allow_same_user_access() noexcept;

// True when process pid has certainly exited: no such process, or it has exited and not been
// reaped yet (a zombie, through a pidfd). False when it runs or when the kernel cannot tell. A pid
// reused by a new process reads as running: callers use it only to stop waiting for a process.
bool process_exited(uint32_t pid) noexcept;

} // namespace softdpu::common
