#include "dma/memcpy.hpp"

#include <sys/uio.h>

#include <cstring>

#include "core/mem/buf.hpp"

namespace softdpu::dma {

namespace {

bool has_remote(const doca_buf *list) noexcept
{
	for (; list != nullptr; list = list->next_in_list())
		if (list->mmap()->remote() != nullptr)
			return true;
	return false;
}

// Copies involving memory of another process: consecutive pieces that go the same way through the
// same export are batched into one process_vm_readv/writev. Local <-> local pieces are memmoved;
// remote <-> remote pieces bounce through a stack buffer.
class RemoteCopier {
public:
	doca_error_t piece(const doca_buf *from, const uint8_t *src, doca_buf *to, uint8_t *dst, size_t n) noexcept
	{
		mem::RemoteMemory *src_remote = from->mmap()->remote();
		mem::RemoteMemory *dst_remote = to->mmap()->remote();
		if (src_remote == nullptr && dst_remote == nullptr) {
			std::memmove(dst, src, n);
			return DOCA_SUCCESS;
		}
		if (src_remote != nullptr && dst_remote != nullptr) {
			doca_error_t result = flush();
			uint8_t bounce[16384];
			for (size_t done = 0; result == DOCA_SUCCESS && done < n;) {
				const size_t chunk = n - done < sizeof(bounce) ? n - done : sizeof(bounce);
				result = src_remote->read(reinterpret_cast<uint64_t>(src + done), bounce, chunk);
				if (result == DOCA_SUCCESS)
					result =
					    dst_remote->write(reinterpret_cast<uint64_t>(dst + done), bounce, chunk);
				done += chunk;
			}
			return result;
		}
		const bool write = dst_remote != nullptr;
		mem::RemoteMemory *remote = write ? dst_remote : src_remote;
		if (count_ != 0 && (remote != remote_ || write != write_ || count_ == kMaxIov)) {
			const doca_error_t result = flush();
			if (result != DOCA_SUCCESS)
				return result;
		}
		remote_ = remote;
		write_ = write;
		if (write) {
			local_[count_] = {const_cast<uint8_t *>(src), n};
			remote_iov_[count_] = {dst, n};
		} else {
			local_[count_] = {dst, n};
			remote_iov_[count_] = {const_cast<uint8_t *>(src), n};
		}
		++count_;
		return DOCA_SUCCESS;
	}

	doca_error_t flush() noexcept
	{
		if (count_ == 0)
			return DOCA_SUCCESS;
		const doca_error_t result = remote_->transfer(write_, local_, count_, remote_iov_, count_);
		count_ = 0;
		return result;
	}

private:
	// Lists hold at most dma_max_buf_list_len elements per side, so a task yields at most the sum of
	// both lengths pieces; more than this only costs an extra system call.
	static constexpr size_t kMaxIov = 128;
	mem::RemoteMemory *remote_ = nullptr;
	bool write_ = false;
	size_t count_ = 0;
	struct iovec local_[kMaxIov];
	struct iovec remote_iov_[kMaxIov];
};

doca_error_t copy_with_remote(const doca_buf *src, doca_buf *dst) noexcept
{
	RemoteCopier copier;
	const auto *src_pos = static_cast<const uint8_t *>(src->data());
	size_t src_left = src->data_len();
	doca_error_t result = DOCA_SUCCESS;
	size_t moved = 0;
	bool done = false;
	for (doca_buf *out = dst; out != nullptr && !done && result == DOCA_SUCCESS; out = out->next_in_list()) {
		size_t room = out->tailroom();
		auto *out_pos = static_cast<uint8_t *>(out->tail());
		while (room > 0 && result == DOCA_SUCCESS) {
			while (src_left == 0) {
				src = src->next_in_list();
				if (src == nullptr) {
					done = true;
					break;
				}
				src_pos = static_cast<const uint8_t *>(src->data());
				src_left = src->data_len();
			}
			if (done)
				break;
			const size_t n = src_left < room ? src_left : room;
			result = copier.piece(src, src_pos, out, out_pos, n);
			src_pos += n;
			out_pos += n;
			src_left -= n;
			room -= n;
			moved += n;
		}
	}
	if (result == DOCA_SUCCESS)
		result = copier.flush();
	if (result != DOCA_SUCCESS)
		return result;
	// Data lengths grow only once everything has been moved (a failed task leaves them alone), in
	// the same order the copy filled the destination elements.
	for (doca_buf *out = dst; out != nullptr && moved != 0; out = out->next_in_list()) {
		const size_t n = out->tailroom() < moved ? out->tailroom() : moved;
		out->set_data_len(out->data_len() + n);
		moved -= n;
	}
	return DOCA_SUCCESS;
}

} // namespace

doca_error_t copy_buffer_lists(const doca_buf *src, doca_buf *dst) noexcept
{
	if (has_remote(src) || has_remote(dst)) [[unlikely]]
		return copy_with_remote(src, dst);
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
