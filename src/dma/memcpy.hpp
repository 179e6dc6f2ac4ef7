// Gather/scatter copy between buffer lists, with DOCA's destination-append semantics.
#pragma once

#include <cstdint>

#include <doca_error.h>

struct doca_buf;

namespace softdpu::dma {

// Copies the data of every element of src (in order) into the tailroom of the elements of dst
// (in order), growing each destination element's data length by what it received. The caller
// has checked that the destination list has room for all of it.
doca_error_t copy_buffer_lists(const doca_buf *src, doca_buf *dst) noexcept;

} // namespace softdpu::dma
