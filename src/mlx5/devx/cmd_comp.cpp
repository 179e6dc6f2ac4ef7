#include "mlx5/devx/cmd_comp.hpp"

#include "mlx5/devx/command_processor.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace softdpu::mlx5::devx {

CmdComp *create_cmd_comp() noexcept
{
	auto *comp = new (std::nothrow) CmdComp();
	if (comp == nullptr) {
		errno = ENOMEM;
		return nullptr;
	}
	comp->dv.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (comp->dv.fd < 0) {
		const int error = errno;
		delete comp;
		errno = error;
		return nullptr;
	}
	return comp;
}

void destroy_cmd_comp(CmdComp *comp) noexcept
{
	::close(comp->dv.fd);
	delete comp;
}

int query_async(Object &object, const void *in, size_t inlen, size_t outlen, uint64_t wr_id, CmdComp &comp) noexcept
{
	{
		std::lock_guard lock(comp.mutex);
		if (outlen > CmdComp::kBudget - comp.budget_used)
			return EAGAIN;
		comp.budget_used += outlen; // reserved while the command runs
	}
	const auto release = [&comp, outlen] {
		std::lock_guard lock(comp.mutex);
		comp.budget_used -= outlen;
	};
	std::vector<uint8_t> record;
	try {
		record.resize(sizeof(uint64_t) + outlen);
	} catch (const std::bad_alloc &) {
		release();
		return ENOMEM;
	}
	std::memcpy(record.data(), &wr_id, sizeof(wr_id));
	const int error = object.owner->query(object, in, inlen, record.data() + sizeof(wr_id), outlen);
	// A command the device refused still completes: its record carries the status.
	if (error != 0 && error != EREMOTEIO) {
		release();
		return error;
	}
	try {
		std::lock_guard lock(comp.mutex);
		comp.records.push_back(std::move(record));
	} catch (const std::bad_alloc &) {
		release();
		return ENOMEM;
	}
	const uint64_t one = 1;
	(void)!::write(comp.dv.fd, &one, sizeof(one));
	return 0;
}

int get_async_cmd_comp(CmdComp &comp, mlx5dv_devx_async_cmd_hdr *resp, size_t resp_len) noexcept
{
	if (resp_len < sizeof(uint64_t))
		return EINVAL;
	uint64_t count = 0;
	// Blocks while no record waits, unless the application made the fd non-blocking (EAGAIN).
	if (::read(comp.dv.fd, &count, sizeof(count)) != static_cast<ssize_t>(sizeof(count)))
		return errno != 0 ? errno : EIO;
	std::lock_guard lock(comp.mutex);
	if (comp.records.empty())
		return EAGAIN; // not reached: the count follows the queue
	std::vector<uint8_t> &record = comp.records.front();
	if (record.size() > resp_len) {
		const uint64_t one = 1;
		(void)!::write(comp.dv.fd, &one, sizeof(one)); // the record stays, and so does its count
		return ENOSPC;
	}
	std::memcpy(resp, record.data(), record.size());
	comp.budget_used -= record.size() - sizeof(uint64_t);
	comp.records.pop_front();
	return 0;
}

} // namespace softdpu::mlx5::devx
