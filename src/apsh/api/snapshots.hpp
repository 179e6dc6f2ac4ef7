// Snapshot arrays handed out by the *_get functions, and the registry that owns them until the
// matching *_free (see objects.hpp for the ownership rules).
#pragma once

#include "apsh/api/objects.hpp"

#include <memory>
#include <vector>

namespace softdpu::apsh::api {

struct SnapshotBase {
	virtual ~SnapshotBase() = default;
	std::shared_ptr<System> system;
};

template <typename T> struct Snapshot : SnapshotBase {
	std::vector<std::unique_ptr<T>> items;
	std::vector<T *> pointers; // NULL-terminated; pointers.data() is the array handed out

	T &add()
	{
		items.push_back(std::make_unique<T>());
		return *items.back();
	}
};

// Attestation arrays remember what they attest, for doca_apsh_attst_refresh.
struct AttestationSnapshot : Snapshot<doca_apsh_attestation> {
	std::shared_ptr<System> process_system;
	Process process;
	std::string map_path;
};

// True when a test asked the next allocation to fail.
bool allocation_should_fail() noexcept;

// Hands ownership to the registry; key is the pointer given to the caller.
void register_snapshot(const void *key, std::unique_ptr<SnapshotBase> snapshot);
// Removes and returns the snapshot of this key; null (and an SDK error) when unknown.
std::unique_ptr<SnapshotBase> take_snapshot(const void *key, const char *function);
// Looks a snapshot up without removing it.
SnapshotBase *find_snapshot(const void *key) noexcept;

// Finishes a snapshot and hands out its array (NULL when empty and null_when_empty).
template <typename T>
doca_error_t publish(std::unique_ptr<Snapshot<T>> snapshot, T ***array, int *size, bool null_when_empty)
{
	for (auto &item : snapshot->items)
		snapshot->pointers.push_back(item.get());
	const int count = static_cast<int>(snapshot->items.size());
	snapshot->pointers.push_back(nullptr);
	if (count == 0 && null_when_empty) {
		*array = nullptr;
		*size = 0;
		return DOCA_SUCCESS;
	}
	T **out = snapshot->pointers.data();
	register_snapshot(out, std::move(snapshot));
	*array = out;
	*size = count;
	return DOCA_SUCCESS;
}

} // namespace softdpu::apsh::api
