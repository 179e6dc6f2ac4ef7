// How the memory subsystem holds on to devices added to an mmap: a device with a user cannot be
// closed (doca_dev_close reports DOCA_ERROR_IN_USE).
#pragma once

struct doca_dev;

namespace softdpu::mem {

void hold_device(doca_dev *dev) noexcept;
void release_device(doca_dev *dev) noexcept;

} // namespace softdpu::mem
