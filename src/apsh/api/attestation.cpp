// Attestation of executable areas (attestation.hpp).
#include "apsh/api/attestation.hpp"

#include <algorithm>
#include <array>

namespace softdpu::apsh::api {

namespace {

// Pages translated per user_page_frames call.
constexpr uint64_t kFrameChunk = 4096;

} // namespace

void Attester::attest(LinuxSystem &guest, const Process &process, std::span<const MemoryArea> areas,
		      const ExecHashMap &map, uint32_t limit, bool count_unknown, std::vector<AreaAttestation> &out,
		      AttestationReads &reads)
{
	for_each_attested_area(areas, limit, [&](size_t k) {
		const MemoryArea &area = areas[k];
		AreaAttestation result;
		result.area = &area;
		result.file = area.file_path.empty() ? nullptr : map.find(area.file_path);
		if (result.file != nullptr || count_unknown)
			attest_area(guest, process, result, reads);
		out.push_back(result);
	});
}

void Attester::attest_area(LinuxSystem &guest, const Process &process, AreaAttestation &result, AttestationReads &reads)
{
	const MemoryArea &area = *result.area;
	const ExecHashFile *file = result.file;
	std::array<uint8_t, kPageSize> page;
	const uint64_t pages = (area.end - area.start + kPageSize - 1) / kPageSize;
	bool known = false;
	for (uint64_t i = 0; i < pages; ++i) {
		const uint64_t va = area.start + i * kPageSize;
		if (i % kFrameChunk == 0) {
			frames_.resize(std::min(pages - i, kFrameChunk));
			known = guest.user_page_frames(process, va, frames_);
		}
		const Sha256Digest *expected = nullptr;
		if (file != nullptr) {
			auto it = file->pages.find(area.offset + i * kPageSize);
			if (it != file->pages.end()) {
				expected = &it->second;
				++result.hashed;
			}
		}
		const uint64_t frame = frames_[i % kFrameChunk];
		if (known && frame == LinuxSystem::kNoPhysicalAddress)
			continue; // not present
		// A frame shared by many processes (a library's text) is read and hashed once per pass.
		auto seen = known ? frame_digests_.find(frame) : frame_digests_.end();
		Sha256Digest digest;
		if (seen != frame_digests_.end()) {
			++reads.frames_reused;
			digest = seen->second;
		} else {
			uint64_t physical = frame;
			if (known ? !guest.read_frame(frame, page)
				  : !guest.read_user_page_physical(process, va, page, physical))
				continue; // not present
			++reads.frames_read;
			if (file == nullptr) {
				++result.present; // nothing to compare it with
				continue;
			}
			if (physical == LinuxSystem::kNoPhysicalAddress) {
				digest = hash_page(page);
			} else {
				digest = digests_->hash(physical, page);
				frame_digests_.emplace(physical, digest);
			}
		}
		++result.present;
		if (expected != nullptr && digest == *expected)
			++result.matching;
	}
}

} // namespace softdpu::apsh::api
