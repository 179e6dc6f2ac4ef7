// Attestation of a process's executable areas against the hash map. Which areas are checked
// (for_each_attested_area) and which are "modified" (AreaAttestation::modified) are decided here
// only, for doca_apsh_attestation_get (scan_api.cpp, through Attester) and for the continuous
// watch's attestation failures (watch.cpp, which reads the same pages in batches shared with YARA).
#pragma once

#include "apsh/api/exec_hash.hpp"
#include "apsh/introspection.hpp"

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace softdpu::apsh::api {

// One executable area's result.
struct AreaAttestation {
	const MemoryArea *area = nullptr;
	const ExecHashFile *file = nullptr; // the map's entry for the area's file; nullptr: none (or anonymous)
	uint32_t hashed = 0;                // pages the map has a hash for
	uint32_t present = 0;               // pages in memory
	uint32_t matching = 0;              // pages in memory whose hash is the map's

	// The verdict "modified": a page in memory that the map does not vouch for (it differs from
	// the file, or the map has no hash for it) in an area the map knows. (`softdpu apsh attest`
	// decides its verdict column the same way from the DOCA attributes.)
	bool modified() const noexcept { return file != nullptr && hashed != 0 && present != 0 && matching < present; }
};

// The executable areas attestation checks, in order, as doca_apsh_attestation_get does: at most
// `limit` of them, anonymous ones counted against the limit too (they have nothing to compare
// with). Calls visit(index into areas) for each.
template <typename Visit> void for_each_attested_area(std::span<const MemoryArea> areas, uint32_t limit, Visit &&visit)
{
	uint32_t attested = 0;
	for (size_t k = 0; k < areas.size(); ++k) {
		const MemoryArea &area = areas[k];
		if (!(area.protection & 4) || area.end <= area.start)
			continue; // executable areas only
		if (attested++ >= limit)
			break;
		visit(k);
	}
}

// Pages read by Attester::attest, and pages whose frame it had already read in the same pass.
struct AttestationReads {
	uint64_t frames_read = 0;
	uint64_t frames_reused = 0;
};

// Walks executable areas page by page: through the reader's frame table where it gives one
// (LinuxSystem::user_page_frames / read_frame), each guest-physical frame read and hashed at most
// once per pass, and hashed again across passes only when its bytes changed (PageDigestCache).
class Attester {
public:
	explicit Attester(PageDigestCache &digests) noexcept : digests_(&digests) {}

	// Starts a pass: frames read from now on are read afresh (their contents may have changed).
	void begin_pass() { frame_digests_.clear(); }

	// The executable areas of `areas`, in order, at most `limit` of them (anonymous ones count
	// against the limit too), one result each. Pages of areas the map does not know are read (to
	// count those present) only when count_unknown is true; with it false, such areas are skipped.
	void attest(LinuxSystem &guest, const Process &process, std::span<const MemoryArea> areas,
		    const ExecHashMap &map, uint32_t limit, bool count_unknown, std::vector<AreaAttestation> &out,
		    AttestationReads &reads);

private:
	void attest_area(LinuxSystem &guest, const Process &process, AreaAttestation &result, AttestationReads &reads);

	PageDigestCache *digests_;
	std::unordered_map<uint64_t, Sha256Digest> frame_digests_; // this pass's digests by frame
	std::vector<uint64_t> frames_;
};

} // namespace softdpu::apsh::api
