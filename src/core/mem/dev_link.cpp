#include "core/mem/dev_link.hpp"

#include "core/dev/dev.hpp"

namespace softdpu::mem {

void hold_device(doca_dev *dev) noexcept
{
	dev->add_user();
}

void release_device(doca_dev *dev) noexcept
{
	dev->remove_user();
}

} // namespace softdpu::mem
