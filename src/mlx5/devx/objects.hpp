// What the DevX object layer keeps per object, per context (command_processor.hpp owns it all).
// The handles applications hold (mlx5dv_devx_obj, mlx5dv_devx_umem, mlx5dv_devx_uar,
// mlx5dv_devx_cmd_comp) are these objects: the public structure first where mlx5dv.h declares one,
// so that the pointer handed out is the object's own address.
#pragma once

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

namespace softdpu::mlx5 {
namespace wq {
class Cq;
class Qp;
} // namespace wq
} // namespace softdpu::mlx5

namespace softdpu::mlx5::devx {

class CommandProcessor;

// A registered user memory range (mlx5dv_devx_umem_reg): commands name it by umem_id + offset.
struct Umem {
	mlx5dv_devx_umem dv{}; // first: the handle is the object
	CommandProcessor *owner = nullptr;
	uint8_t *addr = nullptr;
	size_t size = 0;
	uint32_t access = 0;
	uint32_t users = 0; // mkeys, CQs, QPs that name it (under the processor's mutex)

	// [offset, offset + bytes) lies inside the umem.
	bool holds(uint64_t offset, uint64_t bytes) const noexcept { return offset <= size && bytes <= size - offset; }
};

// A UAR page (mlx5dv_devx_alloc_uar): an mmap'ed page of this process; its page_id is what
// cqc.uar_page and qpc.uar_page name.
struct Uar {
	mlx5dv_devx_uar dv{}; // first: the handle is the object
	CommandProcessor *owner = nullptr;
	void *page = nullptr;
	uint32_t users = 0; // DevX CQs whose UAR doorbell the engine watches on this page
	bool freed = false; // mlx5dv_devx_free_uar came while CQs used it: unmapped with the last
};

// An object made by mlx5dv_devx_obj_create: its create opcode and id (the kernel's obj_id, §6.3),
// the uid it was made under, and the destroy command the kernel saved for it (§6.4).
struct Object {
	static constexpr uint64_t kMagic = 0x4a424f5844564544ull; // "DEVDXOBJ"
	uint64_t magic = kMagic;
	CommandProcessor *owner = nullptr;
	uint16_t uid = 0;
	uint16_t create_opcode = 0;
	uint32_t id = 0;
	std::array<uint8_t, 16> destroy_in{};

	static Object *from(mlx5dv_devx_obj *obj) noexcept
	{
		auto *object = reinterpret_cast<Object *>(obj); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
		return object != nullptr && object->magic == kMagic ? object : nullptr;
	}
	mlx5dv_devx_obj *handle() noexcept
	{
		return reinterpret_cast<mlx5dv_devx_obj *>(this); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
	}
};

// An asynchronous command completion channel (mlx5dv_devx_create_cmd_comp): completed records
// {wr_id, outbox} wait in a queue; `fd` is an eventfd (semaphore mode) counting them, so it is
// readable (poll, epoll) exactly while a record waits (cmd_comp.cpp).
struct CmdComp {
	mlx5dv_devx_cmd_comp dv{}; // first: the handle is the object
	std::mutex mutex;
	std::deque<std::vector<uint8_t>> records;
	size_t budget_used = 0; // outbox bytes queued and not yet read (1 MiB at most, as the kernel's)
	static constexpr size_t kBudget = size_t{1} << 20;
};

// ---- The device objects of a context ----

struct Pd {
	ibv_pd *pd = nullptr; // the verbs PD under it: pdn = pd->handle
};

struct Mkey {
	ibv_pd *pd = nullptr;
	Umem *umem = nullptr;
	uint32_t key = 0; // mkey_index << 8 | mkey_7_0
	uint64_t start_addr = 0;
	uint64_t length = 0;
	uint64_t umem_offset = 0;
	uint32_t access_bits = 0; // a rw rr lw lr, as in the mkc (bit 4: a ... bit 0: lr)
	uint32_t qpn = 0;
	uint32_t log_page_size = 0;
};

struct Cq {
	ibv_cq *backing = nullptr; // cqn = backing->handle
	wq::Cq *engine = nullptr;
	Umem *buffer_umem = nullptr;
	Umem *dbr_umem = nullptr;
	uint64_t buffer_offset = 0;
	uint64_t dbr_offset = 0;
	uint32_t log_size = 0;
	uint32_t uar_page = 0;
	Uar *uar = nullptr; // the page whose CQ doorbell arms it
	uint32_t eqn = 0;
	uint32_t period = 0;
	uint32_t max_count = 0;
	uint32_t users = 0; // DevX QPs completing into it
};

struct Qp {
	ibv_qp *backing = nullptr; // qpn = backing->qp_num
	wq::Qp *engine = nullptr;
	uint32_t pdn = 0;
	uint32_t cqn_snd = 0;
	uint32_t cqn_rcv = 0;
	Cq *send_cq = nullptr; // null when cqn_snd names a verbs CQ
	Cq *recv_cq = nullptr;
	Umem *wq_umem = nullptr;
	Umem *dbr_umem = nullptr;
	uint64_t dbr_offset = 0;
	uint32_t log_sq_size = 0;
	uint32_t log_rq_size = 0;
	uint32_t log_rq_stride = 0;
	uint32_t no_sq = 0;
	uint32_t rq_type = 0;
	uint32_t uar_page = 0;
	uint32_t user_index = 0; // qpc.user_index: its CQEs carry it (CQE version 1)
};

} // namespace softdpu::mlx5::devx
