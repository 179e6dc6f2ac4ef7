// DevX general queries answered from verbs (QUERY_NIC_VPORT_CONTEXT, QUERY_HCA_VPORT_CONTEXT,
// QUERY_HCA_VPORT_GID) and asynchronous object queries (mlx5dv_devx_obj_query_async and the
// command completion channel: records, poll, ENOSPC, EAGAIN, the 1 MiB budget).
#include "devx_support.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <array>
#include <cstring>

using namespace mlx5_test;

namespace {

class DevxQueryTest : public DevxTest {
protected:
	int general(const Mailbox &in, Mailbox *out) const
	{
		return mlx5dv_devx_general_cmd(context_, in.data(), in.size(), out->data(), out->size());
	}
};

TEST_F(DevxQueryTest, NicVportContextCarriesTheFunctionsMac)
{
	Mailbox out(16 + 256, 0xee);
	ASSERT_EQ(general(inbox(kOpQueryNicVport), &out), 0);
	EXPECT_EQ(status_of(out), 0);
	const size_t vport = 0x80;
	// The MAC the link-local GID (index 0, modified EUI-64) is made of.
	ibv_gid gid{};
	ASSERT_EQ(ibv_query_gid(context_, 1, 0, &gid), 0);
	ASSERT_EQ(gid.raw[0], 0xfe);
	const std::array<uint8_t, 6> mac{
	    static_cast<uint8_t>(gid.raw[8] ^ 0x02), gid.raw[9], gid.raw[10], gid.raw[13], gid.raw[14], gid.raw[15]};
	std::array<uint8_t, 6> reported{};
	std::memcpy(reported.data(), out.data() + (vport + 0x7a0) / 8 + 2, 6);
	EXPECT_EQ(reported, mac);
	EXPECT_EQ(prm_bits(out.data(), vport + 0x1f, 1), 1u); // roce_en
	EXPECT_EQ(prm_bits(out.data(), vport + 0x1c0, 64), be64toh(ibv_get_device_guid(devices_[0])));
	ibv_port_attr port{};
	ASSERT_EQ(ibv_query_port(context_, 1, &port), 0);
	EXPECT_EQ(prm_bits(out.data(), vport + 0x130, 16), 128u << port.active_mtu);

	// Another vport's context, and an op_mod the command does not have.
	Mailbox other = inbox(kOpQueryNicVport);
	prm_set_bits(other.data(), 0x40, 1, 1);
	EXPECT_EQ(general(other, &out), EREMOTEIO);
	EXPECT_EQ(status_of(out), kBadParam);
	EXPECT_EQ(syndrome_of(out), 0x5d00002cu);
	EXPECT_EQ(general(inbox(kOpQueryNicVport, 16, 3), &out), EREMOTEIO);
	EXPECT_EQ(status_of(out), kBadOp);
	Mailbox shortened = inbox(kOpQueryNicVport, 16);
	EXPECT_EQ(mlx5dv_devx_general_cmd(context_, shortened.data(), 12, out.data(), out.size()), EINVAL);
}

TEST_F(DevxQueryTest, HcaVportContextAgreesWithVerbs)
{
	Mailbox out(16 + 512, 0xee);
	ASSERT_EQ(general(inbox(kOpQueryHcaVport), &out), 0);
	const size_t vport = 0x80;
	ibv_port_attr port{};
	ASSERT_EQ(ibv_query_port(context_, 1, &port), 0);
	EXPECT_EQ(prm_bits(out.data(), vport + 0x118, 4), static_cast<uint64_t>(port.state));
	EXPECT_EQ(prm_bits(out.data(), vport + 0x1c0, 64), be64toh(ibv_get_device_guid(devices_[0])));
	EXPECT_EQ(prm_bits(out.data(), vport + 0x300, 16), port.lid);
	Mailbox bad_port = inbox(kOpQueryHcaVport);
	prm_set_bits(bad_port.data(), 0x4c, 4, 9);
	EXPECT_EQ(general(bad_port, &out), EREMOTEIO);
	EXPECT_EQ(syndrome_of(out), 0x5d00002du);
}

TEST_F(DevxQueryTest, HcaVportGidIsTheVerbsGidTable)
{
	ibv_port_attr port{};
	ASSERT_EQ(ibv_query_port(context_, 1, &port), 0);
	Mailbox one = inbox(kOpQueryHcaVportGid);
	prm_set_bits(one.data(), 0x70, 16, 1);
	Mailbox out(16 + 16 + 16, 0xee);
	ASSERT_EQ(general(one, &out), 0);
	EXPECT_EQ(prm_bits(out.data(), 0x60, 16), 1u);
	ibv_gid gid{};
	ASSERT_EQ(ibv_query_gid(context_, 1, 1, &gid), 0);
	EXPECT_EQ(std::memcmp(out.data() + 16, gid.raw, 16), 0);

	Mailbox all = inbox(kOpQueryHcaVportGid);
	prm_set_bits(all.data(), 0x70, 16, 0xffff);
	Mailbox table(32 + 16 * static_cast<size_t>(port.gid_tbl_len));
	ASSERT_EQ(general(all, &table), 0);
	EXPECT_EQ(prm_bits(table.data(), 0x60, 16), static_cast<uint64_t>(port.gid_tbl_len));
	for (int i = 0; i < 4 && i < port.gid_tbl_len; ++i) {
		ibv_gid entry{};
		if (ibv_query_gid(context_, 1, i, &entry) != 0)
			entry = {};
		EXPECT_EQ(std::memcmp(table.data() + 16 + 16 * static_cast<size_t>(i), entry.raw, 16), 0) << i;
	}
	prm_set_bits(one.data(), 0x70, 16, static_cast<uint64_t>(port.gid_tbl_len));
	EXPECT_EQ(general(one, &out), EREMOTEIO);
	EXPECT_EQ(syndrome_of(out), 0x5d00002eu);
}

class DevxAsyncTest : public DevxTest {
protected:
	void SetUp() override
	{
		DevxTest::SetUp();
		memory_ = std::make_unique<Pages>(4096);
		umem_ = reg_umem(memory_->data, memory_->size);
		ASSERT_NE(umem_, nullptr);
		ASSERT_NE(alloc_pd(&pdn_), nullptr);
		Mailbox out(16);
		mkey_ = keep(create(mkey_in(pdn_, umem_->umem_id, 0, 0x2000, 4096, 3), &out));
		ASSERT_NE(mkey_, nullptr);
		index_ = id_of(out);
		comp_ = mlx5dv_devx_create_cmd_comp(context_);
		ASSERT_NE(comp_, nullptr) << errno;
	}

	void TearDown() override
	{
		if (comp_ != nullptr)
			mlx5dv_devx_destroy_cmd_comp(comp_);
		DevxTest::TearDown();
	}

	Mailbox query_in(uint32_t index) const
	{
		Mailbox in = inbox(kOpQueryMkey);
		prm_set_bits(in.data(), 0x48, 24, index);
		return in;
	}

	bool readable(int timeout_ms) const
	{
		pollfd fd{comp_->fd, POLLIN, 0};
		return poll(&fd, 1, timeout_ms) == 1 && (fd.revents & POLLIN) != 0;
	}

	std::unique_ptr<Pages> memory_;
	mlx5dv_devx_umem *umem_ = nullptr;
	uint32_t pdn_ = 0;
	mlx5dv_devx_obj *mkey_ = nullptr;
	uint32_t index_ = 0;
	mlx5dv_devx_cmd_comp *comp_ = nullptr;
};

TEST_F(DevxAsyncTest, ARecordPerQuery)
{
	EXPECT_FALSE(readable(0));
	const Mailbox in = query_in(index_);
	ASSERT_EQ(mlx5dv_devx_obj_query_async(mkey_, in.data(), in.size(), 304, 0x1234, comp_), 0);
	EXPECT_TRUE(readable(1000));

	// A buffer shorter than the record: ENOSPC, and the record stays.
	std::vector<uint8_t> small(sizeof(mlx5dv_devx_async_cmd_hdr) + 100);
	EXPECT_EQ(mlx5dv_devx_get_async_cmd_comp(comp_, reinterpret_cast<mlx5dv_devx_async_cmd_hdr *>(small.data()),
						 small.size()),
		  ENOSPC);
	EXPECT_TRUE(readable(0));
	std::vector<uint64_t> buffer((8 + 304) / 8 + 1);
	auto *record = reinterpret_cast<mlx5dv_devx_async_cmd_hdr *>(buffer.data());
	ASSERT_EQ(mlx5dv_devx_get_async_cmd_comp(comp_, record, 8 + 304), 0);
	EXPECT_EQ(record->wr_id, 0x1234u);
	EXPECT_EQ(prm_bits(record->out_data, 0, 8), 0u); // status OK
	EXPECT_EQ(prm_bits(record->out_data, kMkc + 0x80, 64), 0x2000u);
	EXPECT_EQ(prm_bits(record->out_data, kMkc + 0x38, 8), 3u);
	EXPECT_FALSE(readable(0));

	// Nothing waits: a non-blocking fd says EAGAIN.
	const int flags = fcntl(comp_->fd, F_GETFL);
	ASSERT_EQ(fcntl(comp_->fd, F_SETFL, flags | O_NONBLOCK), 0);
	EXPECT_EQ(mlx5dv_devx_get_async_cmd_comp(comp_, record, 8 + 304), EAGAIN);
}

// The completion fd works with epoll, as DPDK registers it with its interrupt thread.
TEST_F(DevxAsyncTest, TheFdWorksWithEpoll)
{
	const int epoll = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_GE(epoll, 0);
	epoll_event interest{};
	interest.events = EPOLLIN;
	interest.data.u64 = 77;
	ASSERT_EQ(epoll_ctl(epoll, EPOLL_CTL_ADD, comp_->fd, &interest), 0);
	epoll_event ready{};
	EXPECT_EQ(epoll_wait(epoll, &ready, 1, 0), 0) << "nothing yet";
	const Mailbox in = query_in(index_);
	ASSERT_EQ(mlx5dv_devx_obj_query_async(mkey_, in.data(), in.size(), 304, 9, comp_), 0);
	ASSERT_EQ(epoll_wait(epoll, &ready, 1, 1000), 1);
	EXPECT_EQ(ready.data.u64, 77u);
	EXPECT_NE(ready.events & EPOLLIN, 0u);
	std::vector<uint64_t> buffer((8 + 304) / 8 + 1);
	auto *record = reinterpret_cast<mlx5dv_devx_async_cmd_hdr *>(buffer.data());
	ASSERT_EQ(mlx5dv_devx_get_async_cmd_comp(comp_, record, 8 + 304), 0);
	EXPECT_EQ(record->wr_id, 9u);
	EXPECT_EQ(epoll_wait(epoll, &ready, 1, 0), 0) << "the record was taken";
	close(epoll);
}

TEST_F(DevxAsyncTest, TheKernelsChecksComeFirstAndTheStatusRidesInTheRecord)
{
	// Another object's id: refused at once (no record).
	const Mailbox wrong = query_in(index_ + 1);
	EXPECT_EQ(mlx5dv_devx_obj_query_async(mkey_, wrong.data(), wrong.size(), 304, 1, comp_), EINVAL);
	EXPECT_FALSE(readable(0));
	// A command the device refuses still completes: the record carries its status (an op_mod
	// QUERY_MKEY does not have).
	Mailbox refused = query_in(index_);
	prm_set_bits(refused.data(), 0x30, 16, 1);
	ASSERT_EQ(mlx5dv_devx_obj_query_async(mkey_, refused.data(), refused.size(), 64, 7, comp_), 0);
	std::vector<uint64_t> buffer((8 + 64) / 8);
	auto *record = reinterpret_cast<mlx5dv_devx_async_cmd_hdr *>(buffer.data());
	ASSERT_TRUE(readable(1000));
	ASSERT_EQ(mlx5dv_devx_get_async_cmd_comp(comp_, record, 8 + 64), 0);
	EXPECT_EQ(record->wr_id, 7u);
	EXPECT_EQ(prm_bits(record->out_data, 0, 8), static_cast<uint64_t>(kBadOp));
	EXPECT_EQ(prm_bits(record->out_data, 0x20, 32), 0x5d000004u);
	// Mailboxes the kernel refuses: at once.
	const Mailbox in = query_in(index_);
	EXPECT_EQ(mlx5dv_devx_obj_query_async(mkey_, in.data(), in.size(), 8, 2, comp_), EINVAL);
	EXPECT_EQ(mlx5dv_devx_obj_query_async(mkey_, in.data(), in.size(), 304, 3, nullptr), EINVAL);
}

TEST_F(DevxAsyncTest, OneMebibyteMayWait)
{
	const Mailbox in = query_in(index_);
	const size_t outlen = 256 * 1024;
	for (int i = 0; i < 4; ++i)
		ASSERT_EQ(
		    mlx5dv_devx_obj_query_async(mkey_, in.data(), in.size(), outlen, static_cast<uint64_t>(i), comp_),
		    0)
		    << i;
	EXPECT_EQ(mlx5dv_devx_obj_query_async(mkey_, in.data(), in.size(), 16, 9, comp_), EAGAIN);
	std::vector<uint64_t> buffer((8 + outlen) / 8);
	auto *record = reinterpret_cast<mlx5dv_devx_async_cmd_hdr *>(buffer.data());
	ASSERT_EQ(mlx5dv_devx_get_async_cmd_comp(comp_, record, 8 + outlen), 0);
	EXPECT_EQ(record->wr_id, 0u);
	// Reading a record gives its bytes back.
	EXPECT_EQ(mlx5dv_devx_obj_query_async(mkey_, in.data(), in.size(), 16, 9, comp_), 0);
}

} // namespace
