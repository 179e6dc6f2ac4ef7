// Test seams of src/core/mem (tests only): states the C API cannot reach directly.
#pragma once

#include "core/mem/mmap.hpp"

namespace softdpu::mem::testing {

struct MmapAccess {
	// Marks an mmap exported or imported, as an export or an import would.
	static void set_kind(doca_mmap &mmap, bool exported, doca_mmap::Origin origin) noexcept
	{
		mmap.exported_ = exported;
		mmap.origin_ = origin;
	}
	// Pretends an mmap is stopped (or started again) while buffers still point into it.
	static void set_started(doca_mmap &mmap, bool started) noexcept { mmap.started_ = started; }
};

} // namespace softdpu::mem::testing
