// The example applications' test frame (samples/memif/memif_app_common.c): the generator writes
// it in pieces (one per chained buffer) with wide vector stores whose last one overlaps; every
// byte must match the frame's definition and nothing outside a piece may be touched.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

extern "C" {
#include "memif_app_common.h"
}

namespace {

// The frame's definition (memif_app_common.h), byte by byte.
uint8_t expected_byte(uint64_t seq, uint32_t frame_len, uint32_t k)
{
	static const uint8_t macs[12] = {0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01};
	if (k < 12) {
		return macs[k];
	}
	if (k == 12) {
		return MEMIF_APP_ETHERTYPE >> 8;
	}
	if (k == 13) {
		return MEMIF_APP_ETHERTYPE & 0xff;
	}
	if (k < 18) {
		return uint8_t("SDPM"[k - 14]);
	}
	if (k < 26) {
		return uint8_t(seq >> (8 * (k - 18)));
	}
	if (k < 30) {
		return uint8_t(frame_len >> (8 * (k - 26)));
	}
	return uint8_t(seq + k);
}

constexpr uint8_t kGuard = 0xA5;
constexpr uint32_t kGuardBytes = 64;

// Writes the frame as pieces of piece_len bytes, each into its own guarded buffer, and checks every
// byte and every guard.
void write_and_check(uint64_t seq, uint32_t frame_len, uint32_t piece_len)
{
	for (uint32_t offset = 0; offset < frame_len; offset += piece_len) {
		const uint32_t len = std::min(piece_len, frame_len - offset);
		std::vector<uint8_t> buffer(kGuardBytes + len + kGuardBytes, kGuard);
		memif_app_frame_write(seq, frame_len, offset, buffer.data() + kGuardBytes, len);
		for (uint32_t i = 0; i < kGuardBytes; ++i) {
			ASSERT_EQ(buffer[i], kGuard) << "written before the piece: seq " << seq << " frame "
						     << frame_len << " piece at " << offset;
			ASSERT_EQ(buffer[kGuardBytes + len + i], kGuard)
			    << "written after the piece: seq " << seq << " frame " << frame_len << " piece at "
			    << offset;
		}
		for (uint32_t i = 0; i < len; ++i) {
			ASSERT_EQ(buffer[kGuardBytes + i], expected_byte(seq, frame_len, offset + i))
			    << "seq " << seq << " frame " << frame_len << " byte " << offset + i;
		}
	}
}

// Both store widths: 32-byte stores (where the CPU has AVX2) and 16-byte ones.
class MemifAppFrame : public ::testing::TestWithParam<bool> {
protected:
	void SetUp() override { memif_app_frame_use_narrow_stores(GetParam() ? 1 : 0); }
	void TearDown() override { memif_app_frame_use_narrow_stores(0); }
};

TEST_P(MemifAppFrame, EveryLengthWholeAndInPieces)
{
	// Lengths around the header and both vector widths; pieces from 1 byte (every offset inside the
	// header) up to the whole frame.
	for (uint32_t frame_len = MEMIF_APP_FRAME_MIN; frame_len <= 200; ++frame_len) {
		for (uint32_t piece_len : {1u, 7u, 16u, 29u, 31u, 32u, 33u, 64u, frame_len}) {
			ASSERT_NO_FATAL_FAILURE(
			    write_and_check(0x0102030405060708ull + frame_len, frame_len, piece_len));
		}
	}
	for (uint32_t frame_len : {1500u, 2048u, 2049u, 9000u}) {
		for (uint32_t piece_len : {2048u, 1000u, frame_len}) {
			ASSERT_NO_FATAL_FAILURE(write_and_check(frame_len * 977ull, frame_len, piece_len));
		}
	}
}

TEST_P(MemifAppFrame, CheckerAcceptsWrittenFramesAndCatchesOneBadByte)
{
	struct memif_app_checker checker;
	memif_app_checker_init(&checker, MEMIF_APP_VERIFY_FULL, 1500);
	std::vector<uint8_t> frame(1500);
	for (uint64_t seq = 0; seq < 3; ++seq) {
		memif_app_frame_write(seq, 1500, 0, frame.data(), 1500);
		memif_app_checker_feed(&checker, frame.data(), 1500, 1);
	}
	EXPECT_FALSE(memif_app_checker_failed(&checker));
	EXPECT_EQ(checker.frames, 3u);
	memif_app_frame_write(3, 1500, 0, frame.data(), 1500);
	frame[1499] ^= 1; // the byte the overlapping last store writes
	memif_app_checker_feed(&checker, frame.data(), 1500, 1);
	EXPECT_TRUE(memif_app_checker_failed(&checker));
	EXPECT_EQ(checker.corrupt, 1u);
}

INSTANTIATE_TEST_SUITE_P(StoreWidth, MemifAppFrame, ::testing::Values(false, true),
			 [](const ::testing::TestParamInfo<bool> &info) { return info.param ? "Narrow" : "Wide"; });

} // namespace
