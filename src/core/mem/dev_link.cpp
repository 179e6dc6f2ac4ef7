#include "core/mem/dev_link.hpp"

#if __has_include("core/dev/dev.hpp")
#include "core/dev/dev.hpp"
#define SOFTDPU_MEM_HAVE_DEV 1
#endif

namespace softdpu::mem {

void hold_device([[maybe_unused]] doca_dev *dev) noexcept
{
#ifdef SOFTDPU_MEM_HAVE_DEV
	dev->add_user();
#endif
}

void release_device([[maybe_unused]] doca_dev *dev) noexcept
{
#ifdef SOFTDPU_MEM_HAVE_DEV
	dev->remove_user();
#endif
}

} // namespace softdpu::mem
