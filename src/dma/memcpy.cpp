#include "dma/memcpy.hpp"

#include <cstring>

#include "core/mem/buf.hpp"

namespace softdpu::dma {

doca_error_t copy_buffer_lists(const doca_buf *src, doca_buf *dst) noexcept
{
	// The common case: one buffer each side.
	if (src->next_in_list() == nullptr && dst->next_in_list() == nullptr) {
		const size_t n = src->data_len();
		std::memmove(dst->tail(), src->data(), n);
		dst->set_data_len(dst->data_len() + n);
		return DOCA_SUCCESS;
	}
	const auto *src_pos = static_cast<const uint8_t *>(src->data());
	size_t src_left = src->data_len();
	for (doca_buf *out = dst; out != nullptr; out = out->next_in_list()) {
		size_t room = out->tailroom();
		while (room > 0) {
			while (src_left == 0) {
				src = src->next_in_list();
				if (src == nullptr)
					return DOCA_SUCCESS;
				src_pos = static_cast<const uint8_t *>(src->data());
				src_left = src->data_len();
			}
			const size_t n = src_left < room ? src_left : room;
			std::memmove(out->tail(), src_pos, n);
			out->set_data_len(out->data_len() + n);
			src_pos += n;
			src_left -= n;
			room -= n;
		}
	}
	// Only reached when the caller's room check was wrong.
	return src_left == 0 && src->next_in_list() == nullptr ? DOCA_SUCCESS : DOCA_ERROR_TOO_BIG;
}

} // namespace softdpu::dma
