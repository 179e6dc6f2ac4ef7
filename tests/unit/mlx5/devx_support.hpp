// Test support for the DevX object tests: inboxes built and outboxes read with the fixture's own bit
// accessors (prm_bits / prm_set_bits), at the PRM's bit offsets written out here (from rdma-core's
// and Linux's mlx5_ifc.h structure layouts), never with src/mlx5/devx/prm.hpp.
#pragma once

#include "mlx5_fixture.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace mlx5_test {

using Mailbox = std::vector<uint8_t>;

// Opcodes.
enum : uint16_t {
	kOpCreateMkey = 0x200,
	kOpQueryMkey = 0x201,
	kOpCreateCq = 0x400,
	kOpQueryCq = 0x402,
	kOpModifyCq = 0x403,
	kOpCreateQp = 0x500,
	kOpRst2Init = 0x502,
	kOpInit2Rtr = 0x503,
	kOpRtr2Rts = 0x504,
	kOpRts2Rts = 0x505,
	kOp2Err = 0x507,
	kOp2Rst = 0x50a,
	kOpQueryQp = 0x50b,
	kOpCreateSq = 0x904,
	kOpQueryNicVport = 0x754,
	kOpQueryHcaVport = 0x762,
	kOpQueryHcaVportGid = 0x764,
	kOpAllocPd = 0x800,
	kOpAllocUar = 0x802,
	kOpAllocTd = 0x816,
};

// Statuses.
enum : uint8_t {
	kBadOp = 0x02,
	kBadParam = 0x03,
	kBadRes = 0x05,
	kBadQpState = 0x10,
};

// Structure offsets (bits).
constexpr size_t kMkc = 0x80;          // create_mkey_in, query_mkey_out
constexpr size_t kCqcIn = 0x80;        // create_cq_in, query_cq_out, modify_cq_in
constexpr size_t kQpcIn = 0xc0;        // create_qp_in, the transitions, query_qp_out
constexpr size_t kAds = kQpcIn + 0xc0; // primary_address_path

inline Mailbox inbox(uint16_t opcode, size_t bytes = 16, uint16_t op_mod = 0)
{
	Mailbox in(bytes, 0);
	prm_set_bits(in.data(), 0x00, 16, opcode);
	prm_set_bits(in.data(), 0x30, 16, op_mod);
	return in;
}

inline uint8_t status_of(const Mailbox &out)
{
	return static_cast<uint8_t>(prm_bits(out.data(), 0x00, 8));
}

inline uint32_t syndrome_of(const Mailbox &out)
{
	return static_cast<uint32_t>(prm_bits(out.data(), 0x20, 32));
}

// The 24-bit id at 0x48 (pd, mkey_index, cqn, qpn, transport_domain).
inline uint32_t id_of(const Mailbox &out)
{
	return static_cast<uint32_t>(prm_bits(out.data(), 0x48, 24));
}

// Page-aligned memory for umems.
struct Pages {
	explicit Pages(size_t bytes) : size(bytes)
	{
		data = static_cast<uint8_t *>(
		    mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	}
	~Pages() { munmap(data, size); }
	Pages(const Pages &) = delete;
	Pages &operator=(const Pages &) = delete;
	uint8_t *data;
	size_t size;
};

class DevxTest : public Mlx5Test {
protected:
	// The DevX objects a test made, destroyed in reverse order at the end (those still alive).
	void TearDown() override
	{
		for (auto it = objects_.rbegin(); it != objects_.rend(); ++it)
			if (*it != nullptr) {
				EXPECT_EQ(mlx5dv_devx_obj_destroy(*it), 0);
			}
		for (mlx5dv_devx_umem *umem : umems_)
			if (umem != nullptr) {
				EXPECT_EQ(mlx5dv_devx_umem_dereg(umem), 0);
			}
		for (mlx5dv_devx_uar *uar : uars_)
			mlx5dv_devx_free_uar(uar);
		Mlx5Test::TearDown();
	}

	mlx5dv_devx_obj *keep(mlx5dv_devx_obj *obj)
	{
		objects_.push_back(obj);
		return obj;
	}
	// Forgets an object the test destroyed itself.
	void forget(mlx5dv_devx_obj *obj)
	{
		for (auto &kept : objects_)
			if (kept == obj)
				kept = nullptr;
	}

	mlx5dv_devx_obj *create(const Mailbox &in, Mailbox *out, ibv_context *context = nullptr)
	{
		out->assign(out->empty() ? 16 : out->size(), 0);
		return mlx5dv_devx_obj_create(context != nullptr ? context : context_, in.data(), in.size(),
					      out->data(), out->size());
	}

	mlx5dv_devx_obj *alloc_pd(uint32_t *pdn, ibv_context *context = nullptr)
	{
		Mailbox out(16);
		mlx5dv_devx_obj *pd = create(inbox(kOpAllocPd), &out, context);
		if (pd != nullptr && context == nullptr)
			keep(pd);
		*pdn = pd != nullptr ? id_of(out) : 0;
		return pd;
	}

	mlx5dv_devx_umem *reg_umem(void *addr, size_t size, ibv_context *context = nullptr)
	{
		mlx5dv_devx_umem *umem =
		    mlx5dv_devx_umem_reg(context != nullptr ? context : context_, addr, size,
					 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
		if (umem != nullptr && context == nullptr)
			umems_.push_back(umem);
		return umem;
	}

	mlx5dv_devx_uar *alloc_uar()
	{
		mlx5dv_devx_uar *uar = mlx5dv_devx_alloc_uar(context_, MLX5DV_UAR_ALLOC_TYPE_NC);
		if (uar != nullptr)
			uars_.push_back(uar);
		return uar;
	}

	// CREATE_MKEY in MTT mode over a umem.
	static Mailbox mkey_in(uint32_t pdn, uint32_t umem_id, uint64_t offset, uint64_t start, uint64_t length,
			       uint8_t variant, bool remote = true)
	{
		Mailbox in = inbox(kOpCreateMkey, 272);
		prm_set_bits(in.data(), kMkc + 0x16, 2, 1); // access_mode_1_0: MTT
		prm_set_bits(in.data(), kMkc + 0x15, 1, 1); // lr
		prm_set_bits(in.data(), kMkc + 0x14, 1, 1); // lw
		if (remote) {
			prm_set_bits(in.data(), kMkc + 0x13, 1, 1); // rr
			prm_set_bits(in.data(), kMkc + 0x12, 1, 1); // rw
		}
		prm_set_bits(in.data(), kMkc + 0x20, 24, 0xffffff); // qpn: none
		prm_set_bits(in.data(), kMkc + 0x38, 8, variant);   // mkey_7_0
		prm_set_bits(in.data(), kMkc + 0x68, 24, pdn);
		prm_set_bits(in.data(), kMkc + 0x80, 64, start);
		prm_set_bits(in.data(), kMkc + 0xc0, 64, length);
		prm_set_bits(in.data(), 0x320, 32, umem_id);
		prm_set_bits(in.data(), 0x340, 64, offset);
		return in;
	}

	// CREATE_CQ: 2^log_size 64-byte CQEs at buffer_umem + 0, the doorbell at dbr_umem + dbr_offset.
	static Mailbox cq_in(uint32_t log_size, uint32_t buffer_umem, uint32_t dbr_umem, uint64_t dbr_offset,
			     uint32_t uar_page, uint32_t eqn = 0)
	{
		Mailbox in = inbox(kOpCreateCq, 272);
		prm_set_bits(in.data(), kCqcIn + 0x20, 32, dbr_umem);
		prm_set_bits(in.data(), kCqcIn + 0x63, 5, log_size);
		prm_set_bits(in.data(), kCqcIn + 0x68, 24, uar_page);
		prm_set_bits(in.data(), kCqcIn + 0xb8, 8, eqn);
		prm_set_bits(in.data(), kCqcIn + 0x1c0, 64, dbr_offset);
		prm_set_bits(in.data(), 0x280, 64, 0); // cq_umem_offset
		prm_set_bits(in.data(), 0x2c0, 32, buffer_umem);
		return in;
	}

	// CREATE_QP (RC): RQ of 2^log_rq entries of 64 bytes, then SQ of 2^log_sq basic blocks.
	static Mailbox qp_in(uint32_t pdn, uint32_t cqn, uint32_t log_sq, uint32_t log_rq, uint32_t wq_umem,
			     uint32_t dbr_umem, uint64_t dbr_offset, uint32_t uar_page)
	{
		Mailbox in = inbox(kOpCreateQp, 272);
		prm_set_bits(in.data(), kQpcIn + 0x08, 8, 0); // st: RC
		prm_set_bits(in.data(), kQpcIn + 0x28, 24, pdn);
		prm_set_bits(in.data(), kQpcIn + 0x49, 4, log_rq);
		prm_set_bits(in.data(), kQpcIn + 0x4d, 3, 2); // log_rq_stride: 64 bytes
		prm_set_bits(in.data(), kQpcIn + 0x51, 4, log_sq);
		prm_set_bits(in.data(), kQpcIn + 0x68, 24, uar_page);
		prm_set_bits(in.data(), kQpcIn + 0x3e8, 24, cqn); // cqn_snd
		prm_set_bits(in.data(), kQpcIn + 0x4e8, 24, cqn); // cqn_rcv
		prm_set_bits(in.data(), kQpcIn + 0x500, 64, dbr_offset);
		prm_set_bits(in.data(), kQpcIn + 0x720, 32, dbr_umem);
		prm_set_bits(in.data(), 0x840, 32, wq_umem);
		return in;
	}

	std::vector<mlx5dv_devx_obj *> objects_;
	std::vector<mlx5dv_devx_umem *> umems_;
	std::vector<mlx5dv_devx_uar *> uars_;
};

} // namespace mlx5_test
