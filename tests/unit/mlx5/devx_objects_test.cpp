// The DevX object layer through the C API: the kernel's checks (contexts without DevX, method
// whitelists, object identity, short mailboxes), PDs, transport domains, umems, UARs, EQ numbers,
// mkeys (usable as lkey and rkey of verbs work requests), objects of another context, objects still
// in use, and what a context leaves at close.
#include "devx_support.hpp"

#include <sys/mman.h>

#include <array>
#include <chrono>
#include <cstring>
#include <thread>

using namespace mlx5_test;

namespace {

class DevxObjectsTest : public DevxTest {};

TEST_F(DevxObjectsTest, AContextWithoutDevxHasNoObjects)
{
	ibv_context *plain = ibv_open_device(devices_[0]);
	ASSERT_NE(plain, nullptr);
	Pages memory(4096);
	Mailbox out(16);
	errno = 0;
	EXPECT_EQ(create(inbox(kOpAllocPd), &out, plain), nullptr);
	EXPECT_EQ(errno, EOPNOTSUPP);
	errno = 0;
	EXPECT_EQ(mlx5dv_devx_umem_reg(plain, memory.data, memory.size, IBV_ACCESS_LOCAL_WRITE), nullptr);
	EXPECT_EQ(errno, EOPNOTSUPP);
	errno = 0;
	EXPECT_EQ(mlx5dv_devx_alloc_uar(plain, MLX5DV_UAR_ALLOC_TYPE_NC), nullptr);
	EXPECT_EQ(errno, EOPNOTSUPP);
	errno = 0;
	EXPECT_EQ(mlx5dv_devx_create_cmd_comp(plain), nullptr);
	EXPECT_EQ(errno, EOPNOTSUPP);
	// The queries the kernel runs for every context.
	Mailbox vport(16 + 512);
	const Mailbox in = inbox(kOpQueryHcaVport);
	EXPECT_EQ(mlx5dv_devx_general_cmd(plain, in.data(), in.size(), vport.data(), vport.size()), 0);
	const Mailbox nic = inbox(kOpQueryNicVport);
	EXPECT_EQ(mlx5dv_devx_general_cmd(plain, nic.data(), nic.size(), vport.data(), vport.size()), EOPNOTSUPP);
	uint32_t eqn = 99;
	EXPECT_EQ(mlx5dv_devx_query_eqn(plain, 0, &eqn), 0);
	EXPECT_EQ(eqn, 0u);
	EXPECT_EQ(ibv_close_device(plain), 0);
}

TEST_F(DevxObjectsTest, EachMethodTakesOnlyItsOpcodes)
{
	Mailbox out(4112);
	// QUERY_HCA_CAP is a general command, not a create.
	errno = 0;
	EXPECT_EQ(create(inbox(0x100, 16, 0x1), &out), nullptr);
	EXPECT_EQ(errno, EINVAL);
	// ALLOC_PD is a create, not a general command.
	const Mailbox pd = inbox(kOpAllocPd);
	EXPECT_EQ(mlx5dv_devx_general_cmd(context_, pd.data(), pd.size(), out.data(), out.size()), EINVAL);
	// A create the kernel passes on and the device does not implement: the device's BAD_OP.
	out.assign(16, 0xee);
	errno = 0;
	EXPECT_EQ(create(inbox(kOpCreateSq, 64), &out), nullptr);
	EXPECT_EQ(errno, EREMOTEIO);
	EXPECT_EQ(status_of(out), kBadOp);
	EXPECT_EQ(syndrome_of(out), 0x5d000001u);
	// An op_mod the command does not have.
	out.assign(16, 0);
	errno = 0;
	EXPECT_EQ(create(inbox(kOpAllocPd, 16, 1), &out), nullptr);
	EXPECT_EQ(errno, EREMOTEIO);
	EXPECT_EQ(status_of(out), kBadOp);
	EXPECT_EQ(syndrome_of(out), 0x5d000004u);
	// Short mailboxes and a tunnelled command never reach the device.
	errno = 0;
	EXPECT_EQ(create(inbox(kOpAllocPd, 8), &out), nullptr);
	EXPECT_EQ(errno, EINVAL);
	Mailbox tunnelled = inbox(kOpAllocPd);
	prm_set_bits(tunnelled.data(), 0x20, 16, 1);
	errno = 0;
	EXPECT_EQ(create(tunnelled, &out), nullptr);
	EXPECT_EQ(errno, EINVAL);
	Mailbox small(8);
	errno = 0;
	EXPECT_EQ(mlx5dv_devx_obj_create(context_, pd.data(), pd.size(), small.data(), small.size()), nullptr);
	EXPECT_EQ(errno, EINVAL);
}

TEST_F(DevxObjectsTest, PdsAndTransportDomains)
{
	uint32_t first = 0;
	uint32_t second = 0;
	mlx5dv_devx_obj *a = alloc_pd(&first);
	mlx5dv_devx_obj *b = alloc_pd(&second);
	ASSERT_NE(a, nullptr);
	ASSERT_NE(b, nullptr);
	EXPECT_NE(first, 0u);
	EXPECT_NE(first, second);
	// A DevX PD is a verbs PD: a verbs memory region in it works (ibv_reg_mr on a pd of that number
	// is not reachable by the caller, so the check is that verbs PDs do not take the same numbers).
	ibv_pd *verbs = ibv_alloc_pd(context_);
	ASSERT_NE(verbs, nullptr);
	EXPECT_NE(verbs->handle, first);
	EXPECT_NE(verbs->handle, second);
	EXPECT_EQ(ibv_dealloc_pd(verbs), 0);

	Mailbox out(16);
	mlx5dv_devx_obj *td = keep(create(inbox(kOpAllocTd), &out));
	ASSERT_NE(td, nullptr) << errno;
	EXPECT_NE(id_of(out), 0u);
	EXPECT_EQ(mlx5dv_devx_obj_destroy(td), 0);
	forget(td);
	EXPECT_EQ(mlx5dv_devx_obj_destroy(b), 0);
	forget(b);
	// A PD has nothing to query or modify: outside those methods' whitelists.
	Mailbox query = inbox(kOpAllocPd);
	EXPECT_EQ(mlx5dv_devx_obj_query(a, query.data(), query.size(), out.data(), out.size()), EINVAL);
}

TEST_F(DevxObjectsTest, UmemRegistration)
{
	Pages memory(8192);
	errno = 0;
	EXPECT_EQ(mlx5dv_devx_umem_reg(context_, memory.data, memory.size, IBV_ACCESS_REMOTE_ATOMIC), nullptr);
	EXPECT_EQ(errno, EINVAL) << "an access flag the kernel does not take for a umem";
	errno = 0;
	EXPECT_EQ(mlx5dv_devx_umem_reg(context_, nullptr, memory.size, IBV_ACCESS_LOCAL_WRITE), nullptr);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(mlx5dv_devx_umem_reg(context_, memory.data, 0, IBV_ACCESS_LOCAL_WRITE), nullptr);
	EXPECT_EQ(errno, EINVAL);

	mlx5dv_devx_umem_in in{};
	in.addr = memory.data;
	in.size = memory.size;
	in.access = IBV_ACCESS_LOCAL_WRITE;
	in.pgsz_bitmap = 0x800; // only 2 KiB pages: none the device maps
	errno = 0;
	EXPECT_EQ(mlx5dv_devx_umem_reg_ex(context_, &in), nullptr);
	EXPECT_EQ(errno, EINVAL);
	in.pgsz_bitmap = 1u << 12;
	in.comp_mask = MLX5DV_UMEM_MASK_DMABUF;
	in.dmabuf_fd = 0;
	errno = 0;
	EXPECT_EQ(mlx5dv_devx_umem_reg_ex(context_, &in), nullptr);
	EXPECT_EQ(errno, EOPNOTSUPP);
	in.comp_mask = 0;
	mlx5dv_devx_umem *ex = mlx5dv_devx_umem_reg_ex(context_, &in);
	ASSERT_NE(ex, nullptr) << errno;
	mlx5dv_devx_umem *plain = reg_umem(memory.data, memory.size);
	ASSERT_NE(plain, nullptr) << errno;
	EXPECT_NE(ex->umem_id, plain->umem_id);
	EXPECT_EQ(mlx5dv_devx_umem_dereg(ex), 0);
	EXPECT_EQ(mlx5dv_devx_umem_dereg(nullptr), EINVAL);
}

TEST_F(DevxObjectsTest, UarPages)
{
	errno = 0;
	EXPECT_EQ(mlx5dv_devx_alloc_uar(context_, 7), nullptr);
	EXPECT_EQ(errno, EINVAL);
	mlx5dv_devx_uar *nc = alloc_uar();
	ASSERT_NE(nc, nullptr) << errno;
	mlx5dv_devx_uar *bf = mlx5dv_devx_alloc_uar(context_, MLX5DV_UAR_ALLOC_TYPE_BF);
	ASSERT_NE(bf, nullptr) << errno;
	EXPECT_NE(nc->page_id, bf->page_id);
	EXPECT_EQ(static_cast<uint8_t *>(nc->reg_addr), static_cast<uint8_t *>(nc->base_addr) + 0x800);
	EXPECT_EQ(reinterpret_cast<uintptr_t>(nc->base_addr) % 4096, 0u);
	EXPECT_NE(nc->mmap_off, bf->mmap_off);
	// The doorbell register is writable memory of the process.
	*static_cast<volatile uint64_t *>(nc->reg_addr) = 0x1122334455667788ull;
	mlx5dv_devx_free_uar(bf);
}

// The kernel pins a umem's pages and refuses a range with a hole (EFAULT).
TEST_F(DevxObjectsTest, AUmemOverUnmappedMemoryIsRefused)
{
	void *pages = mmap(nullptr, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(pages, MAP_FAILED);
	auto *bytes = static_cast<uint8_t *>(pages);
	ASSERT_EQ(munmap(bytes + 4096, 4096), 0); // a hole in the middle
	errno = 0;
	EXPECT_EQ(mlx5dv_devx_umem_reg(context_, bytes, 3 * 4096, IBV_ACCESS_LOCAL_WRITE), nullptr);
	EXPECT_EQ(errno, EFAULT);
	mlx5dv_devx_umem *first = reg_umem(bytes, 4096);
	EXPECT_NE(first, nullptr) << "the mapped page alone is fine: " << errno;
	if (first != nullptr) {
		EXPECT_EQ(mlx5dv_devx_umem_dereg(first), 0);
		umems_.pop_back();
	}
	munmap(bytes, 4096);
	munmap(bytes + 2 * 4096, 4096);
}

// ALLOC_UAR as a DevX create gives a UAR page number CQs may name; its saved destroy frees it.
TEST_F(DevxObjectsTest, UarPagesThroughCommands)
{
	Mailbox out(16);
	mlx5dv_devx_obj *uar = create(inbox(kOpAllocUar), &out);
	ASSERT_NE(uar, nullptr) << errno;
	const uint32_t page_id = id_of(out);
	EXPECT_NE(page_id, 0u);
	EXPECT_EQ(create(inbox(kOpAllocUar, 16, 1), &out), nullptr) << "op_mod 1";
	EXPECT_EQ(errno, EREMOTEIO);
	EXPECT_EQ(status_of(out), 0x02);

	Pages memory(16384);
	mlx5dv_devx_umem *umem = reg_umem(memory.data, memory.size);
	ASSERT_NE(umem, nullptr);
	mlx5dv_devx_obj *cq = create(cq_in(4, umem->umem_id, umem->umem_id, 8192, page_id), &out);
	ASSERT_NE(cq, nullptr) << errno << " status " << int{status_of(out)};
	EXPECT_EQ(mlx5dv_devx_obj_destroy(cq), 0);
	EXPECT_EQ(mlx5dv_devx_obj_destroy(uar), 0);
	EXPECT_EQ(create(cq_in(4, umem->umem_id, umem->umem_id, 8192, page_id), &out), nullptr);
	EXPECT_EQ(errno, EREMOTEIO);
	EXPECT_EQ(status_of(out), 0x03) << "the page is no longer allocated";
	EXPECT_EQ(syndrome_of(out), 0x5d000016u);
}

TEST_F(DevxObjectsTest, EqNumbersOfTheCompletionVectors)
{
	uint32_t eqn = 99;
	ASSERT_GT(context_->num_comp_vectors, 0);
	EXPECT_EQ(mlx5dv_devx_query_eqn(context_, 0, &eqn), 0);
	EXPECT_EQ(eqn, 0u);
	EXPECT_EQ(mlx5dv_devx_query_eqn(context_, static_cast<uint32_t>(context_->num_comp_vectors), &eqn), EINVAL);
}

TEST_F(DevxObjectsTest, MkeyCreateQueryDestroy)
{
	Pages memory(8192);
	mlx5dv_devx_umem *umem = reg_umem(memory.data, memory.size);
	ASSERT_NE(umem, nullptr);
	uint32_t pdn = 0;
	mlx5dv_devx_obj *pd = alloc_pd(&pdn);
	ASSERT_NE(pd, nullptr);
	const uint64_t start = 0x7f0000001000ull;
	Mailbox out(16);
	mlx5dv_devx_obj *mkey = keep(create(mkey_in(pdn, umem->umem_id, 4096, start, 4096, 0x5a), &out));
	ASSERT_NE(mkey, nullptr) << errno << " status " << int(status_of(out));
	const uint32_t index = id_of(out);

	Mailbox query = inbox(kOpQueryMkey);
	prm_set_bits(query.data(), 0x48, 24, index);
	Mailbox answer(304, 0xee);
	ASSERT_EQ(mlx5dv_devx_obj_query(mkey, query.data(), query.size(), answer.data(), answer.size()), 0);
	EXPECT_EQ(status_of(answer), 0);
	EXPECT_EQ(prm_bits(answer.data(), kMkc + 0x16, 2), 1u);   // MTT
	EXPECT_EQ(prm_bits(answer.data(), kMkc + 0x12, 4), 0xfu); // rw rr lw lr
	EXPECT_EQ(prm_bits(answer.data(), kMkc + 0x11, 1), 0u);   // a
	EXPECT_EQ(prm_bits(answer.data(), kMkc + 0x38, 8), 0x5au);
	EXPECT_EQ(prm_bits(answer.data(), kMkc + 0x68, 24), pdn);
	EXPECT_EQ(prm_bits(answer.data(), kMkc + 0x80, 64), start);
	EXPECT_EQ(prm_bits(answer.data(), kMkc + 0xc0, 64), 4096u);

	// A query naming another mkey than the handle's: the kernel's identity check.
	prm_set_bits(query.data(), 0x48, 24, index + 1);
	EXPECT_EQ(mlx5dv_devx_obj_query(mkey, query.data(), query.size(), answer.data(), answer.size()), EINVAL);
	// QUERY_MKEY is a query: the modify method does not take it.
	prm_set_bits(query.data(), 0x48, 24, index);
	EXPECT_EQ(mlx5dv_devx_obj_modify(mkey, query.data(), query.size(), answer.data(), answer.size()), EINVAL);
	// A query of another kind of object on the mkey's handle.
	Mailbox cq_query = inbox(kOpQueryCq);
	prm_set_bits(cq_query.data(), 0x48, 24, index);
	EXPECT_EQ(mlx5dv_devx_obj_query(mkey, cq_query.data(), cq_query.size(), answer.data(), answer.size()), EINVAL);

	// Still in use: the PD (RES_BUSY from the device: EBUSY, both stay valid) and the umem.
	EXPECT_EQ(mlx5dv_devx_obj_destroy(pd), EBUSY);
	EXPECT_EQ(mlx5dv_devx_umem_dereg(umem), EBUSY);
	EXPECT_EQ(mlx5dv_devx_obj_destroy(mkey), 0);
	forget(mkey);
	EXPECT_EQ(mlx5dv_devx_obj_destroy(pd), 0);
	forget(pd);
}

TEST_F(DevxObjectsTest, MkeyChecks)
{
	Pages memory(8192);
	mlx5dv_devx_umem *umem = reg_umem(memory.data, memory.size);
	ASSERT_NE(umem, nullptr);
	uint32_t pdn = 0;
	ASSERT_NE(alloc_pd(&pdn), nullptr);
	Mailbox out(16);
	struct Case {
		const char *what;
		Mailbox in;
		uint8_t status;
		uint32_t syndrome;
	};
	Mailbox klm = mkey_in(pdn, umem->umem_id, 0, 0, 4096, 1);
	prm_set_bits(klm.data(), kMkc + 0x16, 2, 2); // KLMS
	std::vector<Case> cases;
	cases.push_back({"past the umem", mkey_in(pdn, umem->umem_id, 4096, 0, 8192, 1), kBadParam, 0x5d000020});
	cases.push_back({"no such umem", mkey_in(pdn, umem->umem_id + 1000, 0, 0, 4096, 1), kBadRes, 0x5d000012});
	cases.push_back({"no such pd", mkey_in(0xfffff0, umem->umem_id, 0, 0, 4096, 1), kBadRes, 0x5d000010});
	cases.push_back({"empty", mkey_in(pdn, umem->umem_id, 0, 0, 0, 1), kBadParam, 0x5d000022});
	cases.push_back({"KLM access mode", klm, kBadParam, 0x5d000021});
	for (const Case &c : cases) {
		out.assign(16, 0);
		errno = 0;
		EXPECT_EQ(create(c.in, &out), nullptr) << c.what;
		EXPECT_EQ(errno, EREMOTEIO) << c.what;
		EXPECT_EQ(status_of(out), c.status) << c.what;
		EXPECT_EQ(syndrome_of(out), c.syndrome) << c.what;
	}
	// An inbox shorter than create_mkey_in.
	Mailbox shortened = mkey_in(pdn, umem->umem_id, 0, 0, 4096, 1);
	shortened.resize(200);
	errno = 0;
	EXPECT_EQ(create(shortened, &out), nullptr);
	EXPECT_EQ(errno, EINVAL);
}

TEST_F(DevxObjectsTest, AnotherContextsObjectsAreUnknown)
{
	mlx5dv_context_attr attr{};
	attr.flags = MLX5DV_CONTEXT_FLAGS_DEVX;
	ibv_context *other = mlx5dv_open_device(devices_[0], &attr);
	ASSERT_NE(other, nullptr);
	Pages memory(4096);
	mlx5dv_devx_umem *their_umem = reg_umem(memory.data, memory.size, other);
	ASSERT_NE(their_umem, nullptr);
	uint32_t their_pdn = 0;
	mlx5dv_devx_obj *their_pd = alloc_pd(&their_pdn, other);
	ASSERT_NE(their_pd, nullptr);
	mlx5dv_devx_umem *umem = reg_umem(memory.data, memory.size);
	uint32_t pdn = 0;
	ASSERT_NE(alloc_pd(&pdn), nullptr);

	// The firmware refuses a resource of another uid as unknown: BAD_RES.
	Mailbox out(16);
	errno = 0;
	EXPECT_EQ(create(mkey_in(their_pdn, umem->umem_id, 0, 0, 4096, 1), &out), nullptr);
	EXPECT_EQ(errno, EREMOTEIO);
	EXPECT_EQ(status_of(out), kBadRes);
	EXPECT_EQ(syndrome_of(out), 0x5d000010u);
	errno = 0;
	EXPECT_EQ(create(mkey_in(pdn, their_umem->umem_id, 0, 0, 4096, 1), &out), nullptr);
	EXPECT_EQ(errno, EREMOTEIO);
	EXPECT_EQ(syndrome_of(out), 0x5d000012u);
	// A verbs PD of the other context is not this context's either.
	ibv_pd *their_verbs_pd = ibv_alloc_pd(other);
	ASSERT_NE(their_verbs_pd, nullptr);
	errno = 0;
	EXPECT_EQ(create(mkey_in(their_verbs_pd->handle, umem->umem_id, 0, 0, 4096, 1), &out), nullptr);
	EXPECT_EQ(syndrome_of(out), 0x5d000010u);
	EXPECT_EQ(ibv_dealloc_pd(their_verbs_pd), 0);

	EXPECT_EQ(mlx5dv_devx_obj_destroy(their_pd), 0);
	EXPECT_EQ(mlx5dv_devx_umem_dereg(their_umem), 0);
	EXPECT_EQ(ibv_close_device(other), 0);
}

TEST_F(DevxObjectsTest, AVerbsPdTakesDevxMkeys)
{
	Pages memory(4096);
	mlx5dv_devx_umem *umem = reg_umem(memory.data, memory.size);
	ASSERT_NE(umem, nullptr);
	ibv_pd *pd = ibv_alloc_pd(context_);
	ASSERT_NE(pd, nullptr);
	Mailbox out(16);
	mlx5dv_devx_obj *mkey = create(mkey_in(pd->handle, umem->umem_id, 0, 0x1000, 4096, 7), &out);
	ASSERT_NE(mkey, nullptr) << errno << " status " << int(status_of(out));
	EXPECT_EQ(ibv_dealloc_pd(pd), EBUSY) << "the mkey holds the PD";
	EXPECT_EQ(mlx5dv_devx_obj_destroy(mkey), 0);
	EXPECT_EQ(ibv_dealloc_pd(pd), 0);
}

// Two RC QPs of one verbs PD, connected to each other (RoCE, GID 0), in RTS.
class DevxMkeyDataTest : public DevxTest {
protected:
	void SetUp() override
	{
		DevxTest::SetUp();
		pd_ = ibv_alloc_pd(context_);
		ASSERT_NE(pd_, nullptr);
		cq_ = ibv_create_cq(context_, 16, nullptr, nullptr, 0);
		ASSERT_NE(cq_, nullptr);
		ibv_qp_init_attr init{};
		init.send_cq = cq_;
		init.recv_cq = cq_;
		init.qp_type = IBV_QPT_RC;
		init.cap.max_send_wr = 8;
		init.cap.max_recv_wr = 8;
		init.cap.max_send_sge = 1;
		init.cap.max_recv_sge = 1;
		a_ = ibv_create_qp(pd_, &init);
		b_ = ibv_create_qp(pd_, &init);
		ASSERT_NE(a_, nullptr);
		ASSERT_NE(b_, nullptr);
		connect(a_, b_->qp_num);
		connect(b_, a_->qp_num);
	}

	void TearDown() override
	{
		if (a_ != nullptr) {
			EXPECT_EQ(ibv_destroy_qp(a_), 0);
		}
		if (b_ != nullptr) {
			EXPECT_EQ(ibv_destroy_qp(b_), 0);
		}
		if (cq_ != nullptr) {
			EXPECT_EQ(ibv_destroy_cq(cq_), 0);
		}
		for (auto it = objects_.rbegin(); it != objects_.rend(); ++it)
			if (*it != nullptr) {
				EXPECT_EQ(mlx5dv_devx_obj_destroy(*it), 0);
			}
		objects_.clear();
		if (pd_ != nullptr) {
			EXPECT_EQ(ibv_dealloc_pd(pd_), 0);
		}
		DevxTest::TearDown();
	}

	void connect(ibv_qp *qp, uint32_t remote) { connect_rc(context_, qp, remote); }

	bool poll_one(ibv_wc *wc)
	{
		const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
		while (std::chrono::steady_clock::now() < deadline) {
			const int n = ibv_poll_cq(cq_, 1, wc);
			if (n != 0)
				return n == 1;
			std::this_thread::sleep_for(std::chrono::milliseconds(1));
		}
		return false;
	}

	ibv_pd *pd_ = nullptr;
	ibv_cq *cq_ = nullptr;
	ibv_qp *a_ = nullptr;
	ibv_qp *b_ = nullptr;
};

TEST_F(DevxMkeyDataTest, ADevxMkeyIsTheRkeyAndTheLkeyOfVerbsWrites)
{
	Pages target(8192);
	Pages source(4096);
	mlx5dv_devx_umem *target_umem = reg_umem(target.data, target.size);
	mlx5dv_devx_umem *source_umem = reg_umem(source.data, source.size);
	ASSERT_NE(target_umem, nullptr);
	ASSERT_NE(source_umem, nullptr);
	// The target mkey: bytes 4096.. of the target umem, seen at iova 0x10000 (variant 0x33).
	Mailbox out(16);
	mlx5dv_devx_obj *target_mkey =
	    keep(create(mkey_in(pd_->handle, target_umem->umem_id, 4096, 0x10000, 4096, 0x33), &out));
	ASSERT_NE(target_mkey, nullptr) << errno << " status " << int(status_of(out));
	const uint32_t rkey = id_of(out) << 8 | 0x33;
	mlx5dv_devx_obj *source_mkey = keep(create(
	    mkey_in(pd_->handle, source_umem->umem_id, 0, reinterpret_cast<uintptr_t>(source.data), 4096, 0x44, false),
	    &out));
	ASSERT_NE(source_mkey, nullptr) << errno;
	const uint32_t lkey = id_of(out) << 8 | 0x44;

	for (size_t i = 0; i < 256; ++i)
		source.data[i] = static_cast<uint8_t>(i ^ 0xa5);
	ibv_sge sge{};
	sge.addr = reinterpret_cast<uintptr_t>(source.data);
	sge.length = 256;
	sge.lkey = lkey;
	ibv_send_wr wr{};
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = 0x10000 + 512;
	wr.wr.rdma.rkey = rkey;
	ibv_send_wr *bad = nullptr;
	ASSERT_EQ(ibv_post_send(a_, &wr, &bad), 0);
	ibv_wc wc{};
	ASSERT_TRUE(poll_one(&wc));
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
	EXPECT_EQ(std::memcmp(target.data + 4096 + 512, source.data, 256), 0);

	// A wrong variant byte is another key: the write is refused.
	wr.wr.rdma.rkey = (rkey & ~0xffu) | 0x34;
	ASSERT_EQ(ibv_post_send(a_, &wr, &bad), 0);
	ASSERT_TRUE(poll_one(&wc));
	EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR) << ibv_wc_status_str(wc.status);
}

TEST_F(DevxMkeyDataTest, ADestroyedMkeyNoLongerWorks)
{
	Pages target(4096);
	Pages source(4096);
	mlx5dv_devx_umem *umem = reg_umem(target.data, target.size);
	ASSERT_NE(umem, nullptr);
	ibv_mr *mr = ibv_reg_mr(pd_, source.data, source.size, static_cast<int>(IBV_ACCESS_LOCAL_WRITE));
	ASSERT_NE(mr, nullptr);
	Mailbox out(16);
	mlx5dv_devx_obj *mkey = create(mkey_in(pd_->handle, umem->umem_id, 0, 0x40000, 4096, 0x77), &out);
	ASSERT_NE(mkey, nullptr) << errno;
	const uint32_t rkey = id_of(out) << 8 | 0x77;
	ibv_sge sge{reinterpret_cast<uintptr_t>(source.data), 64, mr->lkey};
	ibv_send_wr wr{};
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = 0x40000;
	wr.wr.rdma.rkey = rkey;
	ibv_send_wr *bad = nullptr;
	ibv_wc wc{};
	ASSERT_EQ(ibv_post_send(a_, &wr, &bad), 0);
	ASSERT_TRUE(poll_one(&wc));
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
	// mlx5dv_devx_obj_destroy replays the saved DESTROY_MKEY: the key is gone at once.
	ASSERT_EQ(mlx5dv_devx_obj_destroy(mkey), 0);
	ASSERT_EQ(ibv_post_send(a_, &wr, &bad), 0);
	ASSERT_TRUE(poll_one(&wc));
	EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR) << ibv_wc_status_str(wc.status);
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
}

TEST_F(DevxObjectsTest, ObjectsLeftAtCloseAreFreed)
{
	mlx5dv_context_attr attr{};
	attr.flags = MLX5DV_CONTEXT_FLAGS_DEVX;
	ibv_context *other = mlx5dv_open_device(devices_[0], &attr);
	ASSERT_NE(other, nullptr);
	Pages memory(16384);
	mlx5dv_devx_umem *umem = reg_umem(memory.data, memory.size, other);
	ASSERT_NE(umem, nullptr);
	uint32_t pdn = 0;
	ASSERT_NE(alloc_pd(&pdn, other), nullptr);
	Mailbox out(16);
	ASSERT_NE(create(mkey_in(pdn, umem->umem_id, 0, 0, 4096, 9), &out, other), nullptr);
	mlx5dv_devx_uar *uar = mlx5dv_devx_alloc_uar(other, MLX5DV_UAR_ALLOC_TYPE_NC);
	ASSERT_NE(uar, nullptr);
	ASSERT_NE(create(cq_in(2, umem->umem_id, umem->umem_id, 8192, uar->page_id), &out, other), nullptr) << errno;
	Mailbox qp = qp_in(pdn, id_of(out), 3, 2, umem->umem_id, umem->umem_id, 8192 + 64, uar->page_id);
	prm_set_bits(qp.data(), 0x800, 64, 4096); // wq_umem_offset
	ASSERT_NE(create(qp, &out, other), nullptr) << errno;
	ASSERT_NE(create(inbox(kOpAllocTd), &out, other), nullptr);
	// ibv_close_device frees the QP and the CQ (and their backing verbs objects: the QP first), the
	// mkey (its memory-table entry), the PD, the transport domain, the umem and the UAR page; the
	// ASan build reports any leak.
	EXPECT_EQ(ibv_close_device(other), 0);
}

} // namespace
