// The processor's spin-wait hint, for loops that poll shared memory.
#pragma once

namespace softdpu::common {

// Tells the core that this thread spins (x86 PAUSE, AArch64 YIELD): the sibling hyper-thread gets
// the pipeline and the loop leaves the memory order machinery alone. Also a compiler barrier, so a
// polled value is read again after it.
inline void cpu_relax() noexcept
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
	asm volatile("" ::: "memory");
#elif defined(__aarch64__)
	asm volatile("yield" ::: "memory");
#else
	asm volatile("" ::: "memory");
#endif
}

} // namespace softdpu::common
