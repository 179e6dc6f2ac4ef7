// doca_buf.h: accessors, data section, reference counts and scatter/gather lists.
#include "core/mem/buf.hpp"
#include "mem_fixture.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using Buf = mem_test::StartedMmap;

TEST(BufNullArgs, EveryFunctionRejectsNull)
{
	uint16_t refcount = 0;
	uint32_t count = 0;
	uint8_t flag = 0;
	doca_buf *other = nullptr;
	void *ptr = nullptr;
	size_t len = 0;
	int byte = 0;
	EXPECT_EQ(doca_buf_inc_refcount(nullptr, &refcount), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_dec_refcount(nullptr, &refcount), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_get_refcount(nullptr, &refcount), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_get_list_len(nullptr, &count), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_is_first_in_list(nullptr, &flag), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_is_last_in_list(nullptr, &flag), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_is_in_list(nullptr, &flag), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_get_next_in_list(nullptr, &other), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_get_last_in_list(nullptr, &other), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_get_head(nullptr, &ptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_get_len(nullptr, &len), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_get_data(nullptr, &ptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_get_data_len(nullptr, &len), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_set_data(nullptr, &byte, 1), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_reset_data_len(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_chain_list(nullptr, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_unchain_list(nullptr, nullptr), DOCA_ERROR_INVALID_VALUE);
}

TEST_F(Buf, GettersRejectNullOutputs)
{
	doca_buf *buf = get(0, 64);
	EXPECT_EQ(doca_buf_get_refcount(buf, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_get_list_len(buf, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_is_first_in_list(buf, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_is_last_in_list(buf, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_is_in_list(buf, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_get_next_in_list(buf, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_get_last_in_list(buf, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_get_head(buf, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_get_len(buf, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_get_data(buf, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_get_data_len(buf, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_set_data(buf, nullptr, 0), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_chain_list(buf, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_chain_list(buf, buf), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_unchain_list(buf, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
}

TEST_F(Buf, HeadLenDataAndDataLen)
{
	doca_buf *buf = get(128, 256, 16, 32);
	void *ptr = nullptr;
	size_t len = 0;
	ASSERT_EQ(doca_buf_get_head(buf, &ptr), DOCA_SUCCESS);
	EXPECT_EQ(ptr, at(128));
	ASSERT_EQ(doca_buf_get_len(buf, &len), DOCA_SUCCESS);
	EXPECT_EQ(len, 256u);
	ASSERT_EQ(doca_buf_get_data(buf, &ptr), DOCA_SUCCESS);
	EXPECT_EQ(ptr, at(144));
	ASSERT_EQ(doca_buf_get_data_len(buf, &len), DOCA_SUCCESS);
	EXPECT_EQ(len, 32u);
	// The same through the inline accessors other modules use.
	EXPECT_EQ(buf->head(), at(128));
	EXPECT_EQ(buf->len(), 256u);
	EXPECT_EQ(buf->data(), at(144));
	EXPECT_EQ(buf->data_len(), 32u);
	EXPECT_EQ(buf->tail(), at(176));
	EXPECT_EQ(buf->tailroom(), 256u - 48u);
	EXPECT_EQ(buf->mmap(), mmap);
	EXPECT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
}

TEST_F(Buf, DestinationAppendThroughTheInlineInterface)
{
	// What DMA does: copy to the tail, then grow data_len.
	doca_buf *dst = get(0, 64, 0, 0);
	const char first[] = "abc";
	std::copy(first, first + 3, static_cast<char *>(dst->tail()));
	dst->set_data_len(dst->data_len() + 3);
	std::copy(first, first + 3, static_cast<char *>(dst->tail()));
	dst->set_data_len(dst->data_len() + 3);
	size_t len = 0;
	ASSERT_EQ(doca_buf_get_data_len(dst, &len), DOCA_SUCCESS);
	EXPECT_EQ(len, 6u);
	EXPECT_EQ(std::string(reinterpret_cast<char *>(at(0)), 6), "abcabc");
	EXPECT_EQ(dst->tailroom(), 58u);
	EXPECT_EQ(doca_buf_dec_refcount(dst, nullptr), DOCA_SUCCESS);
}

TEST_F(Buf, SetDataWithinBounds)
{
	doca_buf *buf = get(100, 100);
	EXPECT_EQ(doca_buf_set_data(buf, at(100), 100), DOCA_SUCCESS); // the whole buffer
	EXPECT_EQ(doca_buf_set_data(buf, at(150), 50), DOCA_SUCCESS);  // up to the end
	EXPECT_EQ(doca_buf_set_data(buf, at(200), 0), DOCA_SUCCESS);   // empty at the very end
	EXPECT_EQ(buf->data(), at(200));
	EXPECT_EQ(buf->data_len(), 0u);
	EXPECT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
}

TEST_F(Buf, SetDataOutOfBoundsIsRejectedAndChangesNothing)
{
	doca_buf *buf = get(100, 100, 10, 20);
	EXPECT_EQ(doca_buf_set_data(buf, at(99), 1), DOCA_ERROR_INVALID_VALUE);         // before head
	EXPECT_EQ(doca_buf_set_data(buf, at(150), 51), DOCA_ERROR_INVALID_VALUE);       // past the end
	EXPECT_EQ(doca_buf_set_data(buf, at(201), 0), DOCA_ERROR_INVALID_VALUE);        // starts past the end
	EXPECT_EQ(doca_buf_set_data(buf, at(100), SIZE_MAX), DOCA_ERROR_INVALID_VALUE); // would overflow
	EXPECT_EQ(buf->data(), at(110));
	EXPECT_EQ(buf->data_len(), 20u);
	EXPECT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
}

TEST_F(Buf, ResetDataLenKeepsTheDataPointer)
{
	doca_buf *buf = get(0, 100, 10, 20);
	ASSERT_EQ(doca_buf_reset_data_len(buf), DOCA_SUCCESS);
	EXPECT_EQ(buf->data(), at(10));
	EXPECT_EQ(buf->data_len(), 0u);
	EXPECT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
}

TEST_F(Buf, RefcountIncDecReportPreviousValue)
{
	doca_buf *buf = get(0, 64);
	uint16_t refcount = 0;
	ASSERT_EQ(doca_buf_get_refcount(buf, &refcount), DOCA_SUCCESS);
	EXPECT_EQ(refcount, 1);
	ASSERT_EQ(doca_buf_inc_refcount(buf, &refcount), DOCA_SUCCESS);
	EXPECT_EQ(refcount, 1);
	ASSERT_EQ(doca_buf_inc_refcount(buf, nullptr), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_get_refcount(buf, &refcount), DOCA_SUCCESS);
	EXPECT_EQ(refcount, 3);
	ASSERT_EQ(doca_buf_dec_refcount(buf, &refcount), DOCA_SUCCESS);
	EXPECT_EQ(refcount, 3);
	ASSERT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(free_elements(), 15u); // still held
	ASSERT_EQ(doca_buf_dec_refcount(buf, &refcount), DOCA_SUCCESS);
	EXPECT_EQ(refcount, 1);
	EXPECT_EQ(free_elements(), 16u);
	EXPECT_EQ(num_bufs(), 0u);
}

TEST_F(Buf, RefcountTooBigAtUint16Max)
{
	doca_buf *buf = get(0, 64);
	for (uint32_t i = 1; i < UINT16_MAX; ++i)
		ASSERT_EQ(doca_buf_inc_refcount(buf, nullptr), DOCA_SUCCESS);
	uint16_t refcount = 0;
	ASSERT_EQ(doca_buf_get_refcount(buf, &refcount), DOCA_SUCCESS);
	EXPECT_EQ(refcount, UINT16_MAX);
	EXPECT_EQ(doca_buf_inc_refcount(buf, &refcount), DOCA_ERROR_TOO_BIG);
	for (uint32_t i = 0; i < UINT16_MAX; ++i)
		ASSERT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(free_elements(), 16u);
}

TEST_F(Buf, ReleasedBufferRefcountChangesAreBadState)
{
	doca_buf *buf = get(0, 64);
	ASSERT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
	// The descriptor is back in the inventory (still valid memory): a second release is caught,
	// and so is a new reference, which would otherwise hand the descriptor out twice.
	EXPECT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_ERROR_BAD_STATE);
	uint16_t refcount = 7;
	EXPECT_EQ(doca_buf_inc_refcount(buf, &refcount), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(refcount, 7u);
	EXPECT_EQ(free_elements(), 16u);
	doca_buf *again = get(0, 64);
	EXPECT_EQ(doca_buf_get_refcount(again, &refcount), DOCA_SUCCESS);
	EXPECT_EQ(refcount, 1u);
	EXPECT_EQ(doca_buf_dec_refcount(again, nullptr), DOCA_SUCCESS);
}

TEST_F(Buf, LoneBufferListQueries)
{
	doca_buf *buf = get(0, 64);
	uint8_t flag = 0;
	uint32_t count = 0;
	doca_buf *other = reinterpret_cast<doca_buf *>(1);
	ASSERT_EQ(doca_buf_is_in_list(buf, &flag), DOCA_SUCCESS);
	EXPECT_EQ(flag, 0);
	ASSERT_EQ(doca_buf_is_first_in_list(buf, &flag), DOCA_SUCCESS);
	EXPECT_EQ(flag, 1);
	ASSERT_EQ(doca_buf_is_last_in_list(buf, &flag), DOCA_SUCCESS);
	EXPECT_EQ(flag, 1);
	ASSERT_EQ(doca_buf_get_list_len(buf, &count), DOCA_SUCCESS);
	EXPECT_EQ(count, 1u);
	ASSERT_EQ(doca_buf_get_next_in_list(buf, &other), DOCA_SUCCESS);
	EXPECT_EQ(other, nullptr);
	ASSERT_EQ(doca_buf_get_last_in_list(buf, &other), DOCA_SUCCESS);
	EXPECT_EQ(other, buf);
	EXPECT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
}

class BufList : public mem_test::StartedMmap {
protected:
	// Five buffers 1..5 as two lists: [1,2,3] and [4,5].
	void make_lists()
	{
		for (size_t i = 0; i < 5; ++i)
			b[i] = get(i * 100, 100);
		ASSERT_EQ(doca_buf_chain_list(b[0], b[1]), DOCA_SUCCESS);
		ASSERT_EQ(doca_buf_chain_list(b[0], b[2]), DOCA_SUCCESS);
		ASSERT_EQ(doca_buf_chain_list(b[3], b[4]), DOCA_SUCCESS);
	}
	uint32_t list_len(doca_buf *head)
	{
		uint32_t n = 0;
		EXPECT_EQ(doca_buf_get_list_len(head, &n), DOCA_SUCCESS);
		return n;
	}
	std::vector<doca_buf *> walk(doca_buf *head)
	{
		std::vector<doca_buf *> seen;
		for (doca_buf *buf = head; buf != nullptr;) {
			seen.push_back(buf);
			EXPECT_EQ(doca_buf_get_next_in_list(buf, &buf), DOCA_SUCCESS);
		}
		return seen;
	}
	uint8_t query(doca_error_t (*fn)(const doca_buf *, uint8_t *), doca_buf *buf)
	{
		uint8_t flag = 9;
		EXPECT_EQ(fn(buf, &flag), DOCA_SUCCESS);
		return flag;
	}
	doca_buf *b[5] = {};
};

TEST_F(BufList, ChainAppendsTheSecondList)
{
	make_lists();
	ASSERT_EQ(doca_buf_chain_list(b[0], b[3]), DOCA_SUCCESS);
	EXPECT_EQ(walk(b[0]), (std::vector<doca_buf *>{b[0], b[1], b[2], b[3], b[4]}));
	EXPECT_EQ(list_len(b[0]), 5u);
	EXPECT_EQ(b[0]->list_len(), 5u);
	doca_buf *last = nullptr;
	ASSERT_EQ(doca_buf_get_last_in_list(b[0], &last), DOCA_SUCCESS);
	EXPECT_EQ(last, b[4]);
	ASSERT_EQ(doca_buf_get_last_in_list(b[2], &last), DOCA_SUCCESS); // from the middle, too
	EXPECT_EQ(last, b[4]);
	for (int i = 0; i < 5; ++i) {
		EXPECT_EQ(query(doca_buf_is_in_list, b[i]), 1) << i;
		EXPECT_EQ(query(doca_buf_is_first_in_list, b[i]), i == 0 ? 1 : 0) << i;
		EXPECT_EQ(query(doca_buf_is_last_in_list, b[i]), i == 4 ? 1 : 0) << i;
		EXPECT_EQ(b[i]->is_list_head(), i == 0) << i;
	}
	EXPECT_EQ(num_bufs(), 5u);
	ASSERT_EQ(doca_buf_dec_refcount(b[0], nullptr), DOCA_SUCCESS); // releases the whole list
	EXPECT_EQ(free_elements(), 16u);
	EXPECT_EQ(num_bufs(), 0u);
}

TEST_F(BufList, ListElementsAfterTheHeadAreNotPermitted)
{
	make_lists();
	uint16_t refcount = 0;
	uint32_t count = 0;
	EXPECT_EQ(doca_buf_inc_refcount(b[1], &refcount), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_buf_dec_refcount(b[1], &refcount), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_buf_get_list_len(b[1], &count), DOCA_ERROR_NOT_PERMITTED);
	ASSERT_EQ(doca_buf_get_refcount(b[2], &refcount), DOCA_SUCCESS);
	EXPECT_EQ(refcount, 1);
	// Chaining needs heads on both sides.
	EXPECT_EQ(doca_buf_chain_list(b[1], b[3]), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_buf_chain_list(b[3], b[1]), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_buf_dec_refcount(b[0], nullptr), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_dec_refcount(b[3], nullptr), DOCA_SUCCESS);
}

TEST_F(BufList, ChainNeedsSecondListRefcountOfOne)
{
	make_lists();
	ASSERT_EQ(doca_buf_inc_refcount(b[3], nullptr), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_chain_list(b[0], b[3]), DOCA_ERROR_NOT_PERMITTED);
	// list1 may be shared.
	ASSERT_EQ(doca_buf_dec_refcount(b[3], nullptr), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_inc_refcount(b[0], nullptr), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_chain_list(b[0], b[3]), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_dec_refcount(b[0], nullptr), DOCA_SUCCESS);
	EXPECT_EQ(free_elements(), 11u);
	EXPECT_EQ(doca_buf_dec_refcount(b[0], nullptr), DOCA_SUCCESS);
	EXPECT_EQ(free_elements(), 16u);
}

TEST_F(BufList, ChainRejectsAReleasedFirstList)
{
	doca_buf *first = get(0, 10);
	doca_buf *second = get(10, 10);
	ASSERT_EQ(doca_buf_dec_refcount(first, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_chain_list(first, second), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_chain_list(second, first), DOCA_ERROR_NOT_PERMITTED); // refcount 0, not 1
	EXPECT_EQ(doca_buf_dec_refcount(second, nullptr), DOCA_SUCCESS);
}

TEST_F(BufList, UnchainSplitsAndRestoresBothLists)
{
	make_lists();
	ASSERT_EQ(doca_buf_chain_list(b[0], b[3]), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_unchain_list(b[0], b[3]), DOCA_SUCCESS);
	EXPECT_EQ(walk(b[0]), (std::vector<doca_buf *>{b[0], b[1], b[2]}));
	EXPECT_EQ(walk(b[3]), (std::vector<doca_buf *>{b[3], b[4]}));
	EXPECT_EQ(list_len(b[0]), 3u);
	EXPECT_EQ(list_len(b[3]), 2u);
	uint16_t refcount = 0;
	ASSERT_EQ(doca_buf_get_refcount(b[3], &refcount), DOCA_SUCCESS);
	EXPECT_EQ(refcount, 1);
	doca_buf *last = nullptr;
	ASSERT_EQ(doca_buf_get_last_in_list(b[0], &last), DOCA_SUCCESS);
	EXPECT_EQ(last, b[2]);
	ASSERT_EQ(doca_buf_get_last_in_list(b[3], &last), DOCA_SUCCESS);
	EXPECT_EQ(last, b[4]);
	EXPECT_EQ(query(doca_buf_is_first_in_list, b[3]), 1);
	EXPECT_EQ(query(doca_buf_is_last_in_list, b[2]), 1);
	// Unchain the last element: the head becomes a lone buffer again.
	ASSERT_EQ(doca_buf_unchain_list(b[3], b[4]), DOCA_SUCCESS);
	EXPECT_EQ(query(doca_buf_is_in_list, b[3]), 0);
	EXPECT_EQ(query(doca_buf_is_in_list, b[4]), 0);
	EXPECT_EQ(list_len(b[3]), 1u);
	// Each part is released on its own.
	EXPECT_EQ(doca_buf_dec_refcount(b[3], nullptr), DOCA_SUCCESS);
	EXPECT_EQ(free_elements(), 12u);
	EXPECT_EQ(doca_buf_dec_refcount(b[4], nullptr), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_dec_refcount(b[0], nullptr), DOCA_SUCCESS);
	EXPECT_EQ(free_elements(), 16u);
}

TEST_F(BufList, UnchainRejectsElementsNotInTheList)
{
	make_lists();
	EXPECT_EQ(doca_buf_unchain_list(b[0], b[4]), DOCA_ERROR_INVALID_VALUE); // other list
	EXPECT_EQ(doca_buf_unchain_list(b[0], b[0]), DOCA_ERROR_INVALID_VALUE); // same buffer
	EXPECT_EQ(doca_buf_unchain_list(b[1], b[2]), DOCA_ERROR_INVALID_VALUE); // list1 is not a head
	EXPECT_EQ(doca_buf_unchain_list(b[3], b[0]), DOCA_ERROR_INVALID_VALUE); // a head of another list
	EXPECT_EQ(walk(b[0]).size(), 3u);                                       // nothing changed
	EXPECT_EQ(list_len(b[3]), 2u);
	EXPECT_EQ(doca_buf_dec_refcount(b[0], nullptr), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_dec_refcount(b[3], nullptr), DOCA_SUCCESS);
}

TEST_F(BufList, ChainAcrossMmaps)
{
	std::array<uint8_t, 64> other_memory{};
	doca_mmap *other = nullptr;
	ASSERT_EQ(doca_mmap_create(&other), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_set_memrange(other, other_memory.data(), other_memory.size()), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_start(other), DOCA_SUCCESS);
	doca_buf *here = get(0, 16);
	doca_buf *there = nullptr;
	ASSERT_EQ(doca_buf_inventory_buf_get_by_addr(inventory, other, other_memory.data(), 64, &there), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_chain_list(here, there), DOCA_SUCCESS);
	EXPECT_EQ(here->next_in_list()->mmap(), other);
	EXPECT_EQ(doca_mmap_destroy(other), DOCA_ERROR_NOT_PERMITTED);
	ASSERT_EQ(doca_buf_dec_refcount(here, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_destroy(other), DOCA_SUCCESS);
}

} // namespace
